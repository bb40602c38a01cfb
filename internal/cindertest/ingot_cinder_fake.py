# Written by ingot's internal/cindertest onto cinder-volume's PYTHONPATH.
# Cinder's FakeLoggingVolumeDriver needs no kernel support (no LVM, no
# device-mapper) but answers initialize_connection with access_mode only;
# this answers what the LVM driver behind an iSCSI target does, so the
# connection_info a client reads is realistic. Nothing serves the portal,
# and image copies write nothing.
import hashlib

from cinder.tests import fake_driver


class IscsiFakeDriver(fake_driver.FakeLoggingVolumeDriver):
    def initialize_connection(self, volume, connector):
        info = super().initialize_connection(volume, connector)
        vid = volume['id']
        secret = hashlib.sha256(vid.encode()).hexdigest()
        info['data'].update({
            'target_discovered': False,
            'target_iqn': 'iqn.2010-10.org.openstack:volume-' + vid,
            'target_portal': '127.0.0.1:3260',
            'target_lun': 0,
            'volume_id': vid,
            'auth_method': 'CHAP',
            'auth_username': 'chap-' + secret[:12],
            'auth_password': secret[12:28],
        })
        return info

    # The LVM driver's image copies run qemu-img and dd on a device the
    # fake driver never made: a volume from an image has nothing to write.
    def copy_image_to_volume(self, context, volume, image_service, image_id):
        pass

    def copy_volume_to_image(self, context, volume, image_service, image_meta):
        pass
