#!/usr/bin/env bash
# Debian's oslo.messaging (Python), for the notification tests
# (test/notifications): a real oslo.messaging listener receives what ingot
# publishes. Nova and Ironic pull it in too.
exec bash "$(dirname "$0")/apt-install.sh" /usr/bin/oslo-messaging-send-notification python3-oslo.messaging
