#!/usr/bin/env bash
# Quick start, command 1: set up and run the demo.
source "$(dirname "${BASH_SOURCE[0]}")/_env.sh"
exec "$py" -m axischeck demo "$@"
