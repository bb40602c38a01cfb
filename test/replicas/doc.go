// Package replicas tests S15 (docs/DESIGN.md §2.10) with the real pieces:
// three `ingot serve` processes (the binary, built once) on one PostgreSQL
// database (internal/pgtest), and `ingot sim` in its own process as their
// Ironic, each replica reaching it through its own recording proxy so that
// every request can be attributed to the replica that made it.
//
//   - TestKillOneReplica: 300 builds in flight, one replica killed with
//     SIGKILL; the others take its shards over and finish every build; no
//     server on two nodes, no node leaked; the failover time is reported.
//   - TestPausedReplicaIsFenced: a replica stopped with SIGSTOP past its
//     lease and continued writes nothing (the database) and asks nothing of
//     Ironic (its proxy's log) for the servers it lost.
//   - TestRollingRestart: all three restarted one after the other during a
//     burst of creates: no failed build, no lost request.
//
// Times are reported as figures, never judged against a bound (the machine
// is shared); the bounds that fail a test are the build timeout and I1.
package replicas
