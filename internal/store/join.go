package store

import "sync"

// Joiner runs jobs handed to it at the same time as one batch: a commit
// costs about as much as the writes it carries, so under a burst most of
// a write's cost was its own commit. It adds no wait: a job finding no
// batch under way runs at once, alone; jobs arriving meanwhile queue, and
// the first of them runs the queue as the next batch when the one under
// way ends (so no caller serves others for ever). Safe for concurrent use.
type Joiner[J any] struct {
	run func(batch []J) // runs a batch; each job carries its own result

	mu    sync.Mutex
	busy  bool // a batch is under way
	queue []*joinSlot[J]
}

type joinSlot[J any] struct {
	job J
	// done is closed once job's batch has run, or after lead is set: this
	// slot then runs the queue.
	done chan struct{}
	lead bool
}

// NewJoiner returns a Joiner whose batches run is given, in arrival order.
func NewJoiner[J any](run func(batch []J)) *Joiner[J] { return &Joiner[J]{run: run} }

// Do returns once job has run, alone or in a batch.
func (j *Joiner[J]) Do(job J) {
	me := &joinSlot[J]{job: job, done: make(chan struct{})}
	j.mu.Lock()
	if j.busy {
		j.queue = append(j.queue, me)
		j.mu.Unlock()
		<-me.done // never abandoned: the job may be written
		if !me.lead {
			return
		}
		j.mu.Lock()
		batch := j.queue // me first
		j.queue = nil
		j.mu.Unlock()
		j.runBatch(batch)
	} else {
		j.busy = true
		j.mu.Unlock()
		j.runBatch([]*joinSlot[J]{me})
	}
	j.handOver()
}

// Waiting is the number of jobs queued behind the batch under way.
func (j *Joiner[J]) Waiting() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.queue)
}

// runBatch runs batch and releases each of its slots but the caller's
// (batch's first).
func (j *Joiner[J]) runBatch(batch []*joinSlot[J]) {
	jobs := make([]J, len(batch))
	for i, s := range batch {
		jobs[i] = s.job
	}
	j.run(jobs)
	for _, s := range batch[1:] {
		close(s.done)
	}
}

// handOver ends a batch: the first queued job, if any, runs the queue
// next; else nothing is under way.
func (j *Joiner[J]) handOver() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.queue) == 0 {
		j.busy = false
		return
	}
	next := j.queue[0]
	next.lead = true
	close(next.done)
}
