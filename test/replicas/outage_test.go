package replicas

import (
	"net/http"
	"time"
)

// outage is what a burst through a database outage did.
type outage struct {
	ids, doomed []string      // the creates accepted; those deleted
	back        time.Duration // from down to every shard leased again
	verdict     string        // the history check's line
}

// throughOutage sends 80 creates over the replicas and, once a third of
// them are recorded, takes the database away (down), sends deletes of 8
// of them (each must be answered 503 or not at all), brings it back (up)
// and sends the deletes again until accepted. No replica may exit; every
// shard must be leased again; every create kept ends ACTIVE on its own
// node and every deleted one gone; the history is checked.
func (c *cluster) throughOutage(prefix string, down, up func()) outage {
	c.t.Helper()
	c.retryUnavailable = true
	idsc := make(chan []string)
	go func() { idsc <- c.createAll(prefix, 80, 4, c.all) }()
	c.waitWithin(time.Minute, "a third of the creates in the database", func() bool { return len(c.rows()) >= 25 })
	o := outage{doomed: c.accepted(8)}
	began := time.Now()
	down()
	for _, id := range o.doomed {
		if code := c.deleteOnce(c.reps[1], id); code != http.StatusServiceUnavailable && code != 0 {
			c.t.Errorf("delete of %s with the database away: HTTP %d, want 503", id, code)
		}
	}
	up()
	c.deleteAll(c.reps[1], o.doomed)
	c.waitWithin(2*time.Minute, "both replicas serving with every shard leased again", func() bool {
		for _, r := range c.reps {
			if !r.p.Alive() {
				c.t.Fatalf("%s exited after the outage:\n%s", r.host, r.p.Tail(20))
			}
		}
		return len(holders(c.reps)) == shards
	})
	o.back = time.Since(began)
	o.ids = <-idsc
	if c.t.Failed() {
		c.t.FailNow()
	}
	kept := without(o.ids, o.doomed)
	c.waitActive(c.reps[0], kept)
	c.waitGone(c.reps[0], o.doomed)
	c.checkPlacement(kept)
	for _, r := range c.reps {
		if !r.p.Alive() {
			c.t.Fatalf("%s exited", r.host)
		}
	}
	o.verdict = c.checkHistory(c.reps[0])
	return o
}
