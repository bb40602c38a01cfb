"""Reads a subunit v2 stream (stestr last --subunit) on stdin and writes
one JSON list of {id, status, reason, seconds} on stdout, for TestTempest.
Run with Debian's /usr/bin/python3 (python3-subunit, python3-testtools)."""
import json
import sys

import subunit
import testtools


def main():
    out = []

    def on_test(test):
        if test['status'] in ('exists', 'inprogress'):
            return
        reason = []
        for name, content in test['details'].items():
            if name in ('traceback', 'reason'):
                reason.append(content.as_text())
        ts = [t for t in test['timestamps'] if t is not None]
        seconds = (ts[-1] - ts[0]).total_seconds() if len(ts) == 2 else 0
        out.append({'id': test['id'], 'status': test['status'],
                    'reason': ''.join(reason), 'seconds': seconds})

    stream = subunit.ByteStreamToStreamResult(sys.stdin.buffer,
                                              non_subunit_name='stdout')
    result = testtools.StreamToDict(on_test)
    result.startTestRun()
    stream.run(result)
    result.stopTestRun()
    json.dump(out, sys.stdout, indent=1)


if __name__ == '__main__':
    main()
