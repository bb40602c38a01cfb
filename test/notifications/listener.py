#!/usr/bin/python3
"""An oslo.messaging notification listener, as Ceilometer or a billing
system runs one: it subscribes to TOPIC on EXCHANGE at URL and prints every
notification it receives as one JSON line on stdout (READY once it listens).

Usage: listener.py URL EXCHANGE TOPIC
"""
import json
import sys
import time

from oslo_config import cfg
import oslo_messaging


class Endpoint:
    def _print(self, priority, publisher_id, event_type, payload, metadata):
        line = {"priority": priority, "publisher_id": publisher_id, "event_type": event_type,
                "payload": payload, "message_id": metadata.get("message_id"),
                "timestamp": metadata.get("timestamp")}
        sys.stdout.write(json.dumps(line) + "\n")
        sys.stdout.flush()

    def info(self, ctxt, publisher_id, event_type, payload, metadata):
        self._print("INFO", publisher_id, event_type, payload, metadata)

    def error(self, ctxt, publisher_id, event_type, payload, metadata):
        self._print("ERROR", publisher_id, event_type, payload, metadata)


def main():
    url, exchange, topic = sys.argv[1:4]
    conf = cfg.ConfigOpts()
    conf([], project="ingot-notification-test")
    transport = oslo_messaging.get_notification_transport(conf, url=url)
    targets = [oslo_messaging.Target(topic=topic, exchange=exchange)]
    listener = oslo_messaging.get_notification_listener(transport, targets, [Endpoint()], executor="threading")
    # One worker: the tests check the order the queue holds, and a pool of
    # threads may print two messages that arrive together in either order.
    listener.start(override_pool_size=1)
    sys.stdout.write("READY\n")
    sys.stdout.flush()
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
