#!/usr/bin/env bash
# The layering rule of ARCHITECTURE.md holds (scripts/check_deps.sh).
cd "$(dirname "$0")/.."
if scripts/check_deps.sh; then echo "check_deps: 1 passed, 0 failed"; else echo "check_deps: 0 passed, 1 failed"; exit 1; fi
