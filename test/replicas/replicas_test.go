package replicas

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ingot-dev/ingot/internal/store"
)

// createAll creates n servers, spread over the replicas' APIs by workers
// concurrent clients; a create no replica answered is asked again of the
// next (a replica going away drops its connections; nothing was accepted).
// It fails on any answer but 202.
func (c *cluster) createAll(prefix string, n, workers int, reps func() []*replica) []string {
	return c.createDuring(prefix, n, workers, 0, reps, nil)
}

// createDuring is createAll that goes on past n, each worker pausing pace
// between creates, until until is closed (nil: stop at n), and never
// beyond 2n (the simulator's nodes are counted for that).
func (c *cluster) createDuring(prefix string, n, workers int, pace time.Duration, reps func() []*replica, until <-chan struct{}) []string {
	c.t.Helper()
	var (
		mu   sync.Mutex
		ids  []string
		next atomic.Int64
		wg   sync.WaitGroup
	)
	more := func(i int) bool {
		if i < n {
			return true
		}
		if until == nil || i >= 2*n {
			return false
		}
		select {
		case <-until:
			return false
		default:
			return true
		}
	}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if !more(i) {
					return
				}
				for try := 0; ; try++ {
					rs := reps()
					r := rs[(i+try)%len(rs)]
					if c.t.Context().Err() != nil {
						return // the test is over (it failed elsewhere)
					}
					id, code := c.create(r, fmt.Sprintf("%s-%03d", prefix, i))
					if code == http.StatusServiceUnavailable && c.retryUnavailable {
						c.unavailable.Add(1)
						code = 0
					}
					if code == 0 {
						time.Sleep(20 * time.Millisecond)
						continue
					}
					if code != http.StatusAccepted {
						c.t.Errorf("create %s-%03d through %s: HTTP %d", prefix, i, r.host, code)
						return
					}
					mu.Lock()
					ids = append(ids, id)
					mu.Unlock()
					break
				}
				time.Sleep(pace)
			}
		}()
	}
	wg.Wait()
	if len(ids) < n && !c.t.Failed() {
		c.t.Fatalf("%d creates answered, want %d", len(ids), n)
	}
	return ids
}

func (c *cluster) all() []*replica { return c.reps }

// deploying counts the simulator's nodes in a deploy.
func (c *cluster) deploying() int {
	n := 0
	for _, nd := range c.nodes() {
		if nd.ProvisionState == "deploying" || nd.ProvisionState == "wait call-back" {
			n++
		}
	}
	return n
}

// TestKillOneReplica is S15: 300 builds in flight over three replicas, one
// killed with SIGKILL; the other two take its shards over and finish every
// build; no server on two nodes, no node leaked. The failover is reported:
// kill → its shards held again → the first Ironic call for one of its
// servers → every build ACTIVE.
func TestKillOneReplica(t *testing.T) {
	c := newCluster(t, 330, 3)
	victim, rest := c.reps[0], c.reps[1:]
	before, _ := victim.ready()
	lost := map[int]bool{}
	for _, l := range before.Leases {
		lost[l.Shard] = true
	}
	created := time.Now()
	ids := c.createAll("kill", 300, 16, c.all)
	c.waitFor("builds deploying", func() bool { return c.deploying() >= 60 })
	killed := time.Now()
	victim.p.Kill()

	var takeover time.Time
	c.waitFor("the victim's shards taken over", func() bool {
		h := holders(rest)
		for sh := range lost {
			if _, ok := h[sh]; !ok {
				return false
			}
		}
		takeover = time.Now()
		return true
	})
	c.waitBalanced(rest)
	c.waitActive(rest[0], ids)
	done := time.Now()

	// The first call the survivors made for a server of a lost shard.
	owners := nodeServers(c.nodes())
	var first time.Time
	for _, r := range rest {
		for _, cl := range r.proxy.log() {
			if cl.at.Before(killed) {
				continue
			}
			if s := serverOf(cl, owners); s != "" && lost[store.ShardOf(s, shards)] && (first.IsZero() || cl.at.Before(first)) {
				first = cl.at
			}
		}
	}
	c.checkPlacement(ids)
	t.Logf("300 builds created in %s; victim held %d shards", killed.Sub(created).Round(time.Millisecond), len(lost))
	t.Logf("failover: kill → shards held again %s (lease_ttl %s), → first Ironic call for one of its servers %s; kill → all 300 ACTIVE %s (deploy_time %s)",
		takeover.Sub(killed).Round(time.Millisecond), leaseTTL, first.Sub(killed).Round(time.Millisecond),
		done.Sub(killed).Round(time.Millisecond), deployTime)
	if first.IsZero() {
		t.Logf("(no call for the victim's servers after the kill: they had all reached a deploy before it)")
	}
}

// TestPausedReplicaIsFenced: a replica stopped with SIGSTOP in the middle
// of builds, past its lease, then continued, makes no state write (the
// database: the rows the others finished keep their versions) and asks
// nothing of Ironic (its proxy's log) for what it lost: every change it
// sends after SIGCONT is for a server of a shard it holds again, at a newer
// epoch than before the stop.
func TestPausedReplicaIsFenced(t *testing.T) {
	c := newCluster(t, 150, 3)
	victim, rest := c.reps[0], c.reps[1:]
	ids := c.createAll("pause", 90, 9, c.all)
	c.waitFor("builds deploying", func() bool { return c.deploying() >= 20 })
	before, _ := victim.ready()
	epochBefore := map[int]int64{}
	for _, l := range before.Leases {
		epochBefore[l.Shard] = l.Epoch
	}
	victim.p.Pause()
	stopped := time.Now()
	c.waitFor("the paused replica's shards taken over", func() bool { return len(holders(rest)) == shards })
	c.waitActive(rest[0], ids)
	settled := c.rows()
	calls := len(victim.proxy.log())
	victim.p.Resume()
	resumed := time.Now()
	more := c.createAll("after", 30, 3, func() []*replica { return rest })
	c.waitActive(rest[0], more)
	c.waitBalanced(c.reps)

	after, _ := victim.ready()
	epochNow := map[int]int64{}
	for _, l := range after.Leases {
		epochNow[l.Shard] = l.Epoch
	}
	owners := nodeServers(c.nodes())
	firstBatch := map[string]bool{}
	for _, id := range ids {
		firstBatch[id] = true
	}
	sent := victim.proxy.log()[calls:]
	for _, cl := range sent {
		s := serverOf(cl, owners)
		sh := store.ShardOf(s, shards)
		switch {
		case s == "":
			t.Errorf("after SIGCONT %s sent %s %s for no server of ours", victim.host, cl.method, cl.path)
		case firstBatch[s]:
			t.Errorf("after SIGCONT %s sent %s %s for %s, a server of the first batch the others finished", victim.host, cl.method, cl.path, s)
		case epochNow[sh] == 0 || epochNow[sh] <= epochBefore[sh]:
			t.Errorf("after SIGCONT %s sent %s %s for %s of shard %d, which it does not hold at a new epoch (before %d, now %d)",
				victim.host, cl.method, cl.path, s, sh, epochBefore[sh], epochNow[sh])
		}
	}
	now := c.rows()
	for _, id := range ids {
		if now[id].version != settled[id].version {
			t.Errorf("server %s of the first batch was written after SIGCONT: version %d → %d", id, settled[id].version, now[id].version)
		}
	}
	c.checkPlacement(append(ids, more...))
	t.Logf("paused %s for %s (lease_ttl %s); after SIGCONT it sent %d Ironic changes and holds %d shards again",
		victim.host, resumed.Sub(stopped).Round(time.Millisecond), leaseTTL, len(sent), len(after.Leases))
}

// TestRollingRestart restarts the three replicas one after the other
// (SIGTERM, then start again) during a burst of creates sent to all of
// them, which lasts until the last restart is done (at least 150): every
// create is answered (a replica going away is asked again of another,
// nothing accepted is lost), every build ends ACTIVE, no ERROR.
func TestRollingRestart(t *testing.T) {
	c := newCluster(t, 400, 3)
	ids, handoff := c.roll("roll", func(*replica) {})
	if t.Failed() {
		return
	}
	t.Logf("rolling restart during %d creates: every create answered 202, all ACTIVE; SIGTERM → shards held by the others: %v (lease_ttl %s)",
		len(ids), handoff, leaseTTL)
}

// roll restarts the replicas one by one (SIGTERM, the others take its
// shards, then it starts again after change) while 4 clients create servers
// through the replicas up; it checks that every create was answered 202 and
// every server is ACTIVE on its own node once all are back, and returns the
// ids and each replica's hand-over time.
func (c *cluster) roll(prefix string, change func(*replica)) ([]string, []time.Duration) {
	t := c.t
	var (
		mu      sync.Mutex
		up      = append([]*replica(nil), c.reps...)
		handoff []time.Duration
	)
	serving := func() []*replica {
		mu.Lock()
		defer mu.Unlock()
		return append([]*replica(nil), up...)
	}
	idsc := make(chan []string)
	restarted := make(chan struct{})
	go func() { idsc <- c.createDuring(prefix, 150, 4, 50*time.Millisecond, serving, restarted) }()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, r := range c.reps {
		time.Sleep(time.Duration(200+rng.IntN(300)) * time.Millisecond)
		mu.Lock()
		up = nil
		for _, o := range c.reps {
			if o != r {
				up = append(up, o)
			}
		}
		others := up
		mu.Unlock()
		st, _ := r.ready()
		stop := time.Now()
		r.p.Stop()
		c.waitFor(r.host+"'s shards handed over", func() bool {
			h := holders(others)
			for _, l := range st.Leases {
				if _, ok := h[l.Shard]; !ok {
					return false
				}
			}
			return true
		})
		handoff = append(handoff, time.Since(stop))
		change(r)
		r.start()
		mu.Lock()
		up = append([]*replica(nil), c.reps...)
		mu.Unlock()
	}
	close(restarted)
	ids := <-idsc
	if t.Failed() {
		return ids, handoff
	}
	c.waitActive(c.reps[0], ids)
	c.waitBalanced(c.reps)
	c.checkPlacement(ids)
	return ids, handoff
}

// TestKickReachesTheHolder: an API write on one replica wakes the replica
// holding the server's shard (PostgreSQL NOTIFY), so it acts at once, not at
// its next poll. The poll interval is an hour here: without the kick no
// build would move.
func TestKickReachesTheHolder(t *testing.T) {
	c := newClusterPolling(t, 20, 2, time.Hour)
	a, b := c.reps[0], c.reps[1]
	st, _ := a.ready()
	held := map[int]bool{}
	for _, l := range st.Leases {
		held[l.Shard] = true
	}
	// Creates through b until a few land in a's shards.
	var mine []string
	for i := 0; len(mine) < 5 && i < 40; i++ {
		id, code := c.create(b, fmt.Sprintf("kick-%02d", i))
		if code != http.StatusAccepted {
			t.Fatalf("create through %s: HTTP %d", b.host, code)
		}
		if held[store.ShardOf(id, shards)] {
			mine = append(mine, id)
		}
	}
	start := time.Now()
	c.waitWithin(time.Minute, "the holder deploying every build created on the other replica", func() bool {
		on := map[string]bool{}
		for _, n := range c.nodes() {
			if n.InstanceUUID != "" && (n.ProvisionState == "deploying" || n.ProvisionState == "active") {
				on[n.InstanceUUID] = true
			}
		}
		for _, id := range mine {
			if !on[id] {
				return false
			}
		}
		return true
	})
	t.Logf("%d builds created on %s for %s's shards were deploying %s later (poll_interval 1h)", len(mine), b.host, a.host,
		time.Since(start).Round(time.Millisecond))
}
