#!/usr/bin/env bash
# What tenant isolation costs on the hot paths (issue 11): bench/schema_ab.sh with
#   base     the schema before it (functions SECURITY INVOKER, no pinned search_path, tenants with
#            table privileges), deployed by the superuser as it allowed;
#   head     this tree (SECURITY DEFINER as a non-superuser owner, search_path pinned everywhere);
#   no-SET   this tree with every function's SET search_path removed (SECURITY DEFINER kept):
#            the share of the pinned search_path alone.
# Usage: DATABASE_URL=postgresql:///agent_state bench/security_ab.sh   (a superuser URL)
set -euo pipefail
BASE_REV=${BASE_REV:-93ad56d} BASE_DEPLOY_USER=postgres VARIANT_SQL="$(dirname "$0")/ab/no_search_path.sql" VARIANT_LABEL=no-SET exec "$(dirname "$0")/schema_ab.sh"
