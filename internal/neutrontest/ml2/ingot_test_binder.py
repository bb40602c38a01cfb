# A test-only ML2 mechanism driver for ingot's internal/neutrontest: no
# in-tree driver binds vnic_type baremetal without agents. It binds such a
# port on a flat or vlan segment with vif_type "other" (status ACTIVE), as a
# switch-managing driver (networking-generic-switch) would, except on the
# hosts listed one per line in the file named by INGOT_TEST_REFUSE_FILE
# (read at each binding, so a test can refuse a host while Neutron runs).
import os

from neutron_lib import constants
from neutron_lib.plugins.ml2 import api


class Binder(api.MechanismDriver):
    def initialize(self):
        self.refuse_file = os.environ.get("INGOT_TEST_REFUSE_FILE", "")

    def _refused(self, host):
        if not self.refuse_file:
            return False
        try:
            with open(self.refuse_file) as f:
                return host in {line.strip() for line in f}
        except OSError:
            return False

    def bind_port(self, context):
        port = context.current
        if port.get("binding:vnic_type") != "baremetal" or self._refused(context.host):
            return
        for segment in context.segments_to_bind:
            if segment[api.NETWORK_TYPE] in ("flat", "vlan"):
                context.set_binding(segment[api.ID], "other", {}, status=constants.PORT_STATUS_ACTIVE)
                return
