"""The core: how one case is built, called, snapshotted and compared — torch and the standard
library only.

Note [One core]
The harness runs a case through these modules, and a full reproducer script embeds their
source (conformance/reproducer/bundle.py pastes them in the order of CORE_MODULES), so there
is nothing to keep in parity: the script judges a call exactly as the harness does. Hence
the rules every module here follows (tests/core/test_core.py checks them): it imports
only the standard library, torch and earlier core modules (one `from conformance.core.<m>
import ...` line each); its top-level names are unique across the core; and it works on the
case as plain data (the case model dumped to JSON, with every default present).
"""

CORE_MODULES = ("entry", "spec", "mismatch", "entries", "ways", "checks", "cause", "build", "state", "compare", "call",
                "compile", "loop")
