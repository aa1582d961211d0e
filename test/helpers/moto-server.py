"""moto_server, with each DynamoDB request handled alone.

moto's server runs every request on its own thread and its DynamoDB backend takes no lock, so
two conditional writes to one item at the same moment can both pass their condition: two relays
then both open a group, or both claim a delivery. DynamoDB itself applies each write to an item
atomically; tests of what concurrent relays do need that promise. Other services (an SQS long
poll above all) keep running side by side.

Usage: python3 moto-server.py <host> <port>
"""

import os
import sys
import threading

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import run_simple

host, port = sys.argv[1], int(sys.argv[2])
os.environ.setdefault("MOTO_PORT", str(port))
app = DomainDispatcherApplication(create_backend_app)
dynamodb = threading.Lock()


def one_table_request_at_a_time(environ, start_response):
    if environ.get("HTTP_X_AMZ_TARGET", "").startswith("DynamoDB_"):
        with dynamodb:
            return list(app(environ, start_response))
    return app(environ, start_response)


run_simple(host, port, one_table_request_at_a_time, threaded=True)
