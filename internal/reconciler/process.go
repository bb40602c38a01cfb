package reconciler

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/ingot-dev/ingot/internal/configdrive"
	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/network"
	"github.com/ingot-dev/ingot/internal/nodeview"
	"github.com/ingot-dev/ingot/internal/scheduler"
	"github.com/ingot-dev/ingot/internal/store"
)

// Log field names shared by every line about a server.
const (
	logServer = "server"
	logNode   = "node"
	logPhase  = "phase"
	logAction = "action"
	logReason = "reason"
)

// process takes a server through as many steps as it can this tick: it
// stops at a wait, after asking Ironic to change the node (the view is then
// stale), after StepsPerTick steps, or at the first step boundary after
// the tick's budget deadline (zero: none). It reports whether it stopped
// with a next step due (the budget or StepsPerTick ran out).
func (r *Reconciler) process(ctx context.Context, s *lifecycle.Server, b *bulk, deadline time.Time) (more bool) {
	log := r.log.With(logServer, s.ID)
	ctx, ok := r.fenced(ctx, s.ID)
	if !ok {
		return false // the shard's lease lapsed, or changed epoch, since the read
	}
	v, observed := r.nodeView(ctx, s, b)
	defer func() { r.saw(s, v, observed) }()
	// answered: v is the node as an action's answer showed it, whose lock
	// is that action's own (Ironic answers a PATCH under its lock).
	answered := false
	for i := range r.cfg.StepsPerTick {
		if ctx.Err() != nil || !r.leaseHeld(ctx) {
			return false
		}
		if i > 0 && r.overBudget(deadline) {
			return true
		}
		if !observed && lifecycle.NeedsNode(s) {
			v, observed, answered = r.fetchView(ctx, s, b), true, false
		}
		in := lifecycle.Input{Server: s, Node: v, Now: r.clock.Now(), IronicDown: r.isDown(s.ID) || !b.up}
		a := r.cfg.Decide(in, r.cfg.Lifecycle)
		switch a.Kind {
		case lifecycle.KindWait:
			if answered && v.Locked {
				// Locked by the reservation's own PATCH, most likely gone
				// by now: one look instead of a wait for the next one.
				observed, answered = false, false
				continue
			}
			return false
		case lifecycle.KindSave:
			next, err := r.save(ctx, s, a.Next, a.Events)
			if err != nil {
				if errors.Is(err, errStale) && next != nil {
					s, observed = next, false
					continue
				}
				if r.fencedOut(ctx, err) {
					log.Info("lease lost: server left to its new holder", "err", err)
					return false
				}
				log.Warn("save failed", logPhase, s.Phase, "err", err)
				return false
			}
			log.Info("transition", logPhase, next.Phase, logNode, next.NodeID, "why", a.Why)
			if next.NodeID != s.NodeID {
				observed = false
			}
			s = next
			continue
		}
		if a.Kind == lifecycle.KindAttachVolumes || a.Kind == lifecycle.KindReleaseVolumes ||
			a.Kind == lifecycle.KindAttachVolume || a.Kind == lifecycle.KindDetachVolume {
			// Record before act: the registry shows the node a target is
			// about to be created on, and a stranded volume its error,
			// before the effect runs.
			if err := r.syncVolumes(ctx, s); err != nil {
				log.Warn("volume registry", logAction, a.Kind.String(), "err", err)
				return false
			}
		}
		r.step("before:" + a.Kind.String())
		r.q.acting(s.ID)
		t0 := r.clock.Now()
		res, node := r.execute(ctx, s, a)
		r.timeStep(r.clock.Now().Sub(t0))
		r.step("after:" + a.Kind.String())
		applied := lifecycle.Apply(s, a, res, r.clock.Now(), r.cfg.Lifecycle)
		r.setDown(s.ID, applied.IronicDown)
		if res.Outcome != lifecycle.OK {
			log.Log(ctx, outcomeLevel(a, res, applied), "action did not complete", logAction, a.Kind.String(), logNode, s.NodeID,
				"outcome", res.Outcome.String(), "msg", res.Message)
		}
		if applied.Next != nil {
			next, err := r.save(ctx, s, applied.Next, applied.Events)
			if err != nil {
				if errors.Is(err, errStale) && next != nil {
					s, observed = next, false
					continue
				}
				if errors.Is(err, store.ErrNodeTaken) && a.Kind == lifecycle.KindSchedule {
					// Another server (maybe another replica's) holds the
					// node in the database (I4): choose again.
					r.sched.Taken(res.Node)
					continue
				}
				if r.fencedOut(ctx, err) {
					log.Info("lease lost: server left to its new holder", logAction, a.Kind.String(), "err", err)
					return false
				}
				log.Warn("save failed", logAction, a.Kind.String(), "err", err)
				return false
			}
			log.Info("transition", logPhase, next.Phase, logNode, next.NodeID, logAction, a.Kind.String())
			if next.NodeID != s.NodeID {
				observed = false
			}
			s = next
		}
		if node != nil {
			v, observed, answered = nodeview.Of(*node, s.ID), true, true
		}
		if answered && v.Locked && a.Kind == lifecycle.KindNetwork && res.Outcome == lifecycle.OK && len(s.Spec.Networks) > 0 {
			// The lock the reservation's answer showed was its own PATCH's:
			// each VIF attach since took and released the node's lock, so the
			// deploy needs no look to see it free (Ironic checks its state).
			v.Locked = false
		}
		if applied.Stop && a.Kind == lifecycle.KindPowerOn && s.Phase == lifecycle.PhaseDeploying && res.Outcome == lifecycle.OK &&
			!r.notified.Load() {
			// The power-on after a deploy that left the node off (Ironic's
			// fake deploy interface) usually finishes at once: one look now
			// saves the build a tick. With notifications its end wakes
			// the item instead (a look now mostly finds it under way).
			if v = r.fetchView(ctx, s, b); v.Exists() && !v.PowerSettling && v.Power == lifecycle.PowerOn {
				observed = true
				continue
			}
			return false
		}
		if applied.Stop {
			return false
		}
	}
	return true
}

// save records next (compare-and-swap on the version read). On a conflict it
// returns the freshly read record with errStale, so the caller decides again
// from what the user now wants.
func (r *Reconciler) save(ctx context.Context, before, next *lifecycle.Server, events []lifecycle.Event) (*lifecycle.Server, error) {
	return r.afterSave(ctx, before, next, r.saves.SaveServer(ctx, next, events...))
}

// afterSave is what follows the write of next (err is its outcome): the
// fresh record on a conflict, else the scheduler, hooks and volume registry.
func (r *Reconciler) afterSave(ctx context.Context, before, next *lifecycle.Server, err error) (*lifecycle.Server, error) {
	if errors.Is(err, store.ErrConflict) {
		fresh, gerr := r.store.GetServer(ctx, before.ID)
		if gerr != nil {
			return nil, gerr
		}
		return fresh, errStale
	}
	if err != nil {
		return nil, err
	}
	if before.NodeID != "" && next.NodeID != before.NodeID {
		r.sched.Release(before.NodeID, before.ID)
	}
	r.q.noteSaved(before, next)
	if r.hooks.Transition != nil && before.Phase != next.Phase {
		r.hooks.Transition(before, next)
	}
	if err := r.syncVolumes(ctx, next); err != nil {
		// The record is saved; the registry catches up before the next
		// volume effect (and on every later transition).
		r.log.Warn("volume registry", logServer, next.ID, "err", err)
	}
	r.step("saved:" + string(next.Phase))
	return next, nil
}

func (r *Reconciler) step(point string) {
	if r.hooks.Step != nil {
		r.hooks.Step(point)
	}
}

// nodeView takes the server's node from the bulk view when it is there.
func (r *Reconciler) nodeView(ctx context.Context, s *lifecycle.Server, b *bulk) (lifecycle.NodeView, bool) {
	if s.NodeID == "" {
		return lifecycle.NodeView{}, true
	}
	if !b.up {
		return lifecycle.NodeView{}, true // not observed: Decide waits
	}
	if n, ok := b.nodes[s.NodeID]; ok && !r.q.actedSince(s.ID, b.acts) {
		return nodeview.Of(n, s.ID), true
	}
	return lifecycle.NodeView{}, false // not listed, or listed before our last action on it
}

// fetchView asks Ironic for one node that the bulk view did not show (it
// carries no instance_uuid, or it is gone).
func (r *Reconciler) fetchView(ctx context.Context, s *lifecycle.Server, b *bulk) lifecycle.NodeView {
	if !b.up {
		return lifecycle.NodeView{}
	}
	n, err := r.ironic.GetNode(ctx, s.NodeID)
	switch {
	case err == nil:
		r.setDown(s.ID, false)
		return nodeview.Of(n, s.ID)
	case errors.Is(err, ironic.ErrNotFound):
		r.setDown(s.ID, false)
		return lifecycle.NodeView{State: lifecycle.NodeGone}
	default:
		r.setDown(s.ID, errors.Is(err, ironic.ErrUnavailable))
		r.log.Info("node view failed", logServer, s.ID, logNode, s.NodeID, "err", err)
		return lifecycle.NodeView{}
	}
}

// execute carries out one effect. It returns the node Ironic answered with,
// when the call returned one.
func (r *Reconciler) execute(ctx context.Context, s *lifecycle.Server, a lifecycle.Action) (lifecycle.Result, *ironic.Node) {
	switch a.Kind {
	case lifecycle.KindSchedule:
		listed := r.q.listed()
		node, err := r.sched.Pick(ctx, s)
		if errors.Is(err, scheduler.ErrNoCandidate) {
			res := lifecycle.Result{Outcome: lifecycle.NoCandidate, Returning: r.releasingIn(s.Spec.ResourceClass), Message: scheduler.Why(err)}
			var nc *scheduler.NoCandidateError
			if errors.As(err, &nc) {
				res.Returning += nc.Returning
			}
			return res, nil
		}
		if errors.Is(err, scheduler.ErrRetryLater) {
			r.q.awaitInventory(s.ID, listed, r.clock.Now())
		}
		if err != nil {
			return resultOf(err), nil
		}
		return lifecycle.Result{Outcome: lifecycle.OK, Node: node}, nil
	case lifecycle.KindReserve:
		n, err := r.ironic.Reserve(ctx, s.NodeID, s.ID, configdrive.InstanceInfo(s))
		if err != nil {
			if errors.Is(err, ironic.ErrNodeAssociated) || errors.Is(err, ironic.ErrNotFound) {
				r.sched.Taken(s.NodeID)
			}
			res := resultOf(err)
			if errors.Is(err, ironic.ErrNodeLocked) {
				// Locked for a moment, or busy with something that makes it
				// no candidate (cleaning, say): the core tells them apart.
				if cur, gerr := r.ironic.GetNode(ctx, s.NodeID); gerr == nil {
					v := nodeview.Of(cur, s.ID)
					res.View = &v
				}
			}
			return res, nil
		}
		r.sched.Taken(s.NodeID)
		v := nodeview.Of(n, s.ID)
		return lifecycle.Result{Outcome: lifecycle.OK, View: &v}, &n
	case lifecycle.KindNetwork:
		return r.attachNetworks(ctx, s), nil
	case lifecycle.KindDeploy:
		req, err := r.deployRequest(ctx, s)
		if err != nil {
			return resultOf(err), nil
		}
		req.InstanceInfoSet = s.NodeID != "" && s.InstanceInfoOn == s.NodeID
		return resultOf(r.ironic.Deploy(ctx, s.NodeID, req)), nil
	case lifecycle.KindUndeploy:
		return resultOf(r.ironic.Undeploy(ctx, s.NodeID)), nil
	case lifecycle.KindUnreserve:
		return r.unreserve(ctx, s, a.RemoveInstance), nil
	case lifecycle.KindFreePorts:
		return r.freePorts(ctx, s), nil
	case lifecycle.KindCreateVolume:
		return r.createVolume(ctx, s, a.Volume), nil
	case lifecycle.KindAttachVolumes:
		return r.attachVolumes(ctx, s), nil
	case lifecycle.KindDetachVolumes:
		return r.detachVolumes(ctx, s), nil
	case lifecycle.KindReleaseVolumes:
		return r.releaseVolumes(ctx, s), nil
	case lifecycle.KindAttachVolume:
		return r.attachVolume(ctx, s), nil
	case lifecycle.KindDetachVolume:
		return r.detachVolume(ctx, s), nil
	case lifecycle.KindReboot:
		return resultOf(r.ironic.Reboot(ctx, s.NodeID, a.Hard)), nil
	case lifecycle.KindPowerOff:
		return resultOf(r.ironic.SetPowerOff(ctx, s.NodeID)), nil
	case lifecycle.KindPowerOn:
		return resultOf(r.ironic.SetPowerOn(ctx, s.NodeID)), nil
	case lifecycle.KindRebuild:
		req, err := r.deployRequest(ctx, s)
		if err != nil {
			return resultOf(err), nil
		}
		// What the old image or flavor set and the new spec does not is
		// removed: Ironic would check the new image against an old checksum.
		for _, k := range configdrive.OptionalInstanceInfo() {
			if _, ok := req.InstanceInfo[k]; !ok {
				req.InstanceInfo[k] = nil
			}
		}
		return resultOf(r.ironic.Rebuild(ctx, s.NodeID, req)), nil
	case lifecycle.KindRescue:
		return resultOf(r.ironic.Rescue(ctx, s.NodeID, s.Op.RescuePassword)), nil
	case lifecycle.KindUnrescue:
		return resultOf(r.ironic.Unrescue(ctx, s.NodeID)), nil
	case lifecycle.KindAttachInterface:
		return r.attachInterface(ctx, s), nil
	case lifecycle.KindDetachInterface:
		return r.detachInterface(ctx, s), nil
	}
	return lifecycle.Result{Outcome: lifecycle.Transient, Message: "unknown action " + a.Kind.String()}, nil
}

func (r *Reconciler) unreserve(ctx context.Context, s *lifecycle.Server, removeInstance bool) lifecycle.Result {
	ports, err := r.store.Ports(ctx, s.ID)
	if err != nil {
		return resultOf(err)
	}
	for _, p := range ports {
		if p.VIFNode != s.NodeID {
			continue
		}
		if err := r.ironic.DetachVIF(ctx, s.NodeID, p.VIF()); err != nil && !errors.Is(err, ironic.ErrNotFound) {
			return resultOf(err)
		}
		if err := r.unbindPort(ctx, p); err != nil {
			return resultOf(err)
		}
	}
	if removeInstance {
		if err := r.ironic.Unreserve(ctx, s.NodeID); err != nil && !errors.Is(err, ironic.ErrNotFound) {
			return resultOf(err)
		}
	}
	return lifecycle.Result{Outcome: lifecycle.OK}
}

func (r *Reconciler) freePorts(ctx context.Context, s *lifecycle.Server) lifecycle.Result {
	ports, err := r.store.Ports(ctx, s.ID)
	if err != nil {
		return resultOf(err)
	}
	for _, p := range ports {
		if err := r.ports.Free(ctx, p); err != nil {
			return resultOf(err)
		}
	}
	return lifecycle.Result{Outcome: lifecycle.OK}
}

func (r *Reconciler) portsOf(ctx context.Context, s *lifecycle.Server) []store.Port {
	ports, err := r.store.Ports(ctx, s.ID)
	if err != nil {
		r.log.Warn("ports for config drive", logServer, s.ID, "err", err)
	}
	return ports
}

// outcomeLevel is the log level of an effect that did not complete: INFO,
// but DEBUG for a build waiting for the scheduler's next inventory listing,
// which every waiting build repeats each tick (the scheduler logs one INFO
// line per burst of them), and for one waiting for capacity on its way back
// (its first wait is recorded, with an event, as a transition).
func outcomeLevel(a lifecycle.Action, res lifecycle.Result, ap lifecycle.Applied) slog.Level {
	if a.Kind == lifecycle.KindSchedule && res.Outcome == lifecycle.Transient && res.Message == scheduler.ErrRetryLater.Error() {
		return slog.LevelDebug
	}
	if a.Kind == lifecycle.KindSchedule && res.Outcome == lifecycle.NoCandidate && ap.Next == nil {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

// resultOf maps the adapters' typed errors to lifecycle outcomes.
func resultOf(err error) lifecycle.Result {
	if err == nil {
		return lifecycle.Result{Outcome: lifecycle.OK}
	}
	msg := err.Error()
	switch {
	case errors.Is(err, ironic.ErrUnavailable):
		return lifecycle.Result{Outcome: lifecycle.Unreachable, Message: msg}
	case errors.Is(err, ironic.ErrNodeLocked), errors.Is(err, ironic.ErrInstanceAssociated):
		return lifecycle.Result{Outcome: lifecycle.Transient, Message: msg}
	case errors.Is(err, ironic.ErrNotFound):
		return lifecycle.Result{Outcome: lifecycle.Gone, Message: msg}
	case errors.Is(err, ironic.ErrNodeAssociated):
		return lifecycle.Result{Outcome: lifecycle.Taken, Message: msg}
	case errors.Is(err, ironic.ErrInvalidState):
		return lifecycle.Result{Outcome: lifecycle.InvalidState, Message: msg}
	case errors.Is(err, ironic.ErrInvalid):
		return lifecycle.Result{Outcome: lifecycle.Rejected, Message: msg}
	case errors.Is(err, network.ErrPoolExhausted), errors.Is(err, network.ErrRefused):
		return lifecycle.Result{Outcome: lifecycle.Exhausted, Message: msg}
	}
	return lifecycle.Result{Outcome: lifecycle.Transient, Message: msg}
}
