"""`ray start` that keeps a loopback ``--node-ip-address`` as given: a cluster on one machine's loopback.

Ray's command line swaps 127.0.0.1 for the machine's outward address (so that other machines can reach the node),
and refuses worker nodes when told to keep loopback addresses. The compose stack's loopback variant (tests, trying
it on one machine) needs every node on 127.0.0.1; on a real network give each node its private address instead and
this is not used (deploy/entrypoint.sh decides).
"""

import sys

from ray._private import services
from ray.scripts.scripts import main

services.resolve_ip_for_localhost = lambda host: host
sys.exit(main())
