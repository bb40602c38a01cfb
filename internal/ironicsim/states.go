package ironicsim

import "time"

// The provision state machine, evaluated lazily: an action records a pending
// transition with a deadline, and advance completes it (at the deadline's
// instant, not the read's) the first time the node is read at or after it.
// No goroutine and no sleep is involved, so a manual clock makes every run
// deterministic.

// actionable lists, per API verb (Ironic's event name), the provision states
// in which Ironic's state machine accepts it (ironic/common/states.py).
var actionable = map[string][]string{
	"deploy":   {stateAvailable, stateDeployFailed},
	"rebuild":  {stateDeployFailed, stateActive, stateError},
	"delete":   {stateActive, stateWaitCallback, stateDeployFailed, stateError, "rescue", "rescue wait", "rescue failed", "unrescue failed"},
	"manage":   {stateEnroll, stateAvailable, stateCleanFailed, "inspect failed", "adopt failed", stateCleaning},
	"provide":  {stateManageable},
	"abort":    {"clean wait", "inspect wait", "rescue wait"},
	"inspect":  {stateManageable, "inspect failed"},
	"clean":    {stateManageable},
	"adopt":    {stateManageable, "adopt failed"},
	"rescue":   {stateActive, "rescue", "rescue failed", "unrescue failed"},
	"unrescue": {"rescue", "rescue failed", "unrescue failed"},
}

// verbs maps the API's provision targets to state machine events.
var verbs = map[string]string{
	"active": "deploy", "deploy": "deploy", "deleted": "delete", "undeploy": "delete",
	"manage": "manage", "provide": "provide", "inspect": "inspect", "abort": "abort",
	"clean": "clean", "adopt": "adopt", "rescue": "rescue", "unrescue": "unrescue",
}

// minVerbVersion is the microversion each target needs (MIN_VERB_VERSIONS).
var minVerbVersion = map[string]int{
	"manage": 4, "provide": 4, "inspect": 6, "abort": 13, "clean": 15, "adopt": 17,
	"rescue": 38, "unrescue": 38, "deploy": 73, "undeploy": 73,
}

func isActionable(state, target string) bool {
	ev, ok := verbs[target]
	if !ok {
		ev = target
	}
	for _, st := range actionable[ev] {
		if st == state {
			return true
		}
	}
	return false
}

// setPending records a transition that completes at deadline. Caller holds s.mu.
func (s *Sim) setPending(n *node, kind pendingKind, deadline time.Time, noDeadline bool) {
	n.pending, n.deadline, n.noDeadline = kind, deadline, noDeadline
	s.markBusy(n)
}

// markBusy keeps in s.busy the nodes that settle must bring up to date: a
// pending transition or a lingering lock. Caller holds s.mu.
func (s *Sim) markBusy(n *node) {
	if n.pending == pendNone && n.lockUntil.IsZero() {
		delete(s.busy, n)
	} else {
		s.busy[n] = struct{}{}
	}
}

// releaseLock lets go of the conductor's lock at the end of a deploy step
// (active, wait call-back, deploy failed): at once, or Options.LockLinger
// later, like the real conductor, which shows the new state before it
// releases the reservation (measured 40–140 ms apart). Caller holds s.mu.
func (s *Sim) releaseLock(n *node, at time.Time) {
	if s.opts.LockLinger <= 0 {
		n.Reservation, n.lockUntil = "", time.Time{}
		return
	}
	n.Reservation, n.lockUntil = s.opts.Host, at.Add(s.opts.LockLinger)
	s.markBusy(n)
}

// takeLock reserves the node for the conductor (a lingering release is
// superseded). Caller holds s.mu.
func (s *Sim) takeLock(n *node) {
	n.Reservation, n.lockUntil = s.opts.Host, time.Time{}
}

// advance completes every pending transition whose deadline the clock has
// reached, then a lingering lock release. Caller holds s.mu.
func (s *Sim) advance(n *node, now time.Time) {
	s.advancePending(n, now)
	if !n.lockUntil.IsZero() && !now.Before(n.lockUntil) {
		n.Reservation, n.lockUntil = "", time.Time{}
		s.markBusy(n)
	}
}

func (s *Sim) advancePending(n *node, now time.Time) {
	for n.pending != pendNone && !n.noDeadline {
		at := n.deadline
		if n.pending == pendCallback {
			// NOTE: Ironic's _check_deploy_timeouts skips nodes in
			// maintenance; once maintenance is off the timeout fires at the
			// next check (docs/ironic.md §7B).
			if n.Maintenance {
				return
			}
			if n.maintOffAt.After(at) {
				at = n.maintOffAt
			}
		}
		if now.Before(at) {
			return
		}
		s.complete(n, at)
	}
}

// complete performs the pending transition at instant at. Caller holds s.mu.
func (s *Sim) complete(n *node, at time.Time) {
	switch n.pending {
	case pendVerify:
		n.Reservation = ""
		n.setProvision(stateManageable, "", at)
		s.setPending(n, pendNone, time.Time{}, false)
	case pendClean:
		n.Reservation = ""
		n.setProvision(stateAvailable, "", at)
		s.setPending(n, pendNone, time.Time{}, false)
	case pendDeploy:
		switch {
		case n.failNext != nil:
			n.LastError = *n.failNext
			n.failNext = nil
			s.releaseLock(n, at)
			n.setProvision(stateDeployFailed, stateActive, at)
			s.setPending(n, pendNone, time.Time{}, false)
		case n.hold || n.DeployInterface == "custom-agent":
			s.releaseLock(n, at)
			n.PowerState = powerOn
			n.setProvision(stateWaitCallback, stateActive, at)
			s.setPending(n, pendCallback, at.Add(s.opts.CallbackTimeout), n.hold)
		default:
			s.finishDeploy(n, at)
		}
	case pendCallback:
		n.LastError = "Timeout reached while waiting for callback for node " + n.UUID
		n.PowerState = powerOn
		s.releaseLock(n, at)
		n.setProvision(stateDeployFailed, stateActive, at)
		s.setPending(n, pendNone, time.Time{}, false)
	case pendUndeploy:
		// NOTE: instance_uuid and instance_info are cleared at the end of
		// deleting, not at its start (docs/ironic.md §7D), with the tenant VIFs.
		s.setInstance(n, "")
		n.InstanceInfo = map[string]any{}
		delete(n.DriverInternalInfo, "is_whole_disk_image")
		s.detachAllVIFs(n)
		if n.DeployInterface == "custom-agent" {
			n.PowerState = powerOff
		}
		if s.opts.CleanTime > 0 {
			n.setProvision(stateCleaning, stateAvailable, at)
			s.setPending(n, pendClean, at.Add(s.opts.CleanTime), false)
			return
		}
		n.Reservation = ""
		n.setProvision(stateAvailable, "", at)
		s.setPending(n, pendNone, time.Time{}, false)
	case pendRescue, pendUnrescue:
		s.releaseLock(n, at)
		if n.pending == pendRescue {
			n.setProvision("rescue", "", at)
		} else {
			n.setProvision(stateActive, "", at)
		}
		s.setPending(n, pendNone, time.Time{}, false)
	default:
		s.setPending(n, pendNone, time.Time{}, false)
	}
}

// rescueTime is how long the fake rescue interface takes to rescue or
// unrescue a node (measured about 55 ms on Ironic 21.4, docs/ironic.md §12).
const rescueTime = 50 * time.Millisecond

// startRescue handles the rescue and unrescue verbs of the fake rescue
// interface: rescuing → rescue, unrescuing → active. Caller holds s.mu.
func (s *Sim) startRescue(n *node, at time.Time, rescue bool) {
	s.takeLock(n)
	n.LastError = ""
	if rescue {
		n.setProvision("rescuing", "rescue", at)
		s.setPending(n, pendRescue, at.Add(rescueTime), false)
		return
	}
	n.setProvision("unrescuing", stateActive, at)
	s.setPending(n, pendUnrescue, at.Add(rescueTime), false)
}

// finishDeploy makes the node active as the fake deploy interface does.
func (s *Sim) finishDeploy(n *node, at time.Time) {
	s.releaseLock(n, at)
	n.hold = false
	n.setProvision(stateActive, "", at)
	s.setPending(n, pendNone, time.Time{}, false)
}

func (s *Sim) deployTimeOf(n *node) time.Duration {
	if n.deployTime != nil {
		return *n.deployTime
	}
	return s.opts.DeployTime
}

func (s *Sim) undeployTimeOf(n *node) time.Duration {
	if n.undeployTime != nil {
		return *n.undeployTime
	}
	return s.opts.UndeployTime
}

// startDeploy moves an available (or deploy failed / active for rebuild)
// node to deploying, locked by the conductor. Caller holds s.mu.
func (s *Sim) startDeploy(n *node, at time.Time, configdrive any) {
	d := s.deployTimeOf(n)
	if n.failNext == nil && (n.hold || n.DeployInterface == "custom-agent") && d > agentPrepareTime {
		d = agentPrepareTime
	}
	if configdrive != nil {
		n.InstanceInfo = setKey(n.InstanceInfo, "configdrive", configdrive)
	}
	n.LastError = ""
	s.takeLock(n)
	n.setProvision(stateDeploying, stateActive, at)
	s.setPending(n, pendDeploy, at.Add(d), false)
}

// startTeardown moves a node to deleting, locked by the conductor.
// Caller holds s.mu.
func (s *Sim) startTeardown(n *node, at time.Time) {
	n.LastError = ""
	n.hold = false
	s.takeLock(n)
	n.setProvision(stateDeleting, stateAvailable, at)
	s.setPending(n, pendUndeploy, at.Add(s.undeployTimeOf(n)), false)
}

// startManage handles the manage verb. Caller holds s.mu.
func (s *Sim) startManage(n *node, at time.Time) {
	if n.ProvisionState == stateEnroll {
		s.takeLock(n)
		n.setProvision(stateVerifying, stateManageable, at)
		s.setPending(n, pendVerify, at.Add(s.opts.VerifyTime), false)
		return
	}
	n.setProvision(stateManageable, "", at)
	s.setPending(n, pendNone, time.Time{}, false)
}

// startProvide handles the provide verb (automated cleaning with no steps).
func (s *Sim) startProvide(n *node, at time.Time) {
	s.takeLock(n)
	n.setProvision(stateCleaning, stateAvailable, at)
	s.setPending(n, pendClean, at.Add(s.opts.CleanTime), false)
}

// stuckFail maps the states a restarted conductor cannot resume
// (STUCK_STATES_TREATED_AS_FAIL) to the state and target they fail to.
var stuckFail = map[string][2]string{
	stateDeploying: {stateDeployFailed, stateActive},
	stateCleaning:  {stateCleanFailed, stateAvailable},
	stateVerifying: {stateEnroll, ""},
	stateDeleting:  {stateError, ""},
}

// restartNode fails a transient state as a restarted conductor does.
func (s *Sim) restartNode(n *node, at time.Time) {
	if to, ok := stuckFail[n.ProvisionState]; ok {
		n.LastError = "The " + n.ProvisionState + " state can't be resumed by conductor " +
			s.opts.Host + ". Moving to fail state."
		n.setProvision(to[0], to[1], at)
		s.setPending(n, pendNone, time.Time{}, false)
	}
	n.Reservation, n.lockUntil = "", time.Time{}
	s.markBusy(n)
}

// withNode runs f on the up-to-date node named by id under the lock.
func (s *Sim) withNode(id string, f func(n *node, now time.Time) error) error {
	defer s.changed()
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	n := s.lookup(id, now)
	if n == nil {
		return ErrNodeNotFound
	}
	return f(n, now)
}

// FailNextDeploy makes the node's next (or current) deploy end in
// `deploy failed` with the given last_error after its deploy time, instead of
// `active`. Repeating it replaces the message; it is consumed by one deploy.
func (s *Sim) FailNextDeploy(id, lastError string) error {
	return s.withNode(id, func(n *node, _ time.Time) error {
		msg := lastError
		n.failNext = &msg
		return nil
	})
}

// HoldDeploy makes the node's next (or current) deploy stop in
// `wait call-back` (unlocked, no callback timeout) until ReleaseDeploy.
// Idempotent.
func (s *Sim) HoldDeploy(id string) error {
	return s.withNode(id, func(n *node, _ time.Time) error {
		n.hold = true
		return nil
	})
}

// ReleaseDeploy ends a hold: a node waiting in `wait call-back` (held, or a
// custom-agent node, as if its agent called back) becomes `active` now; a
// node not there yet simply deploys normally. Idempotent.
func (s *Sim) ReleaseDeploy(id string) error {
	return s.withNode(id, func(n *node, now time.Time) error {
		n.hold = false
		if n.ProvisionState == stateWaitCallback {
			s.finishDeploy(n, now)
		}
		return nil
	})
}

// DeleteOutOfBand deletes the node as an operator would (maintenance on, then
// DELETE), whatever its state or lock: its ports, VIFs, volume connectors and
// targets go with it. ErrNodeNotFound if it is already gone.
func (s *Sim) DeleteOutOfBand(id string) error {
	return s.withNode(id, func(n *node, _ time.Time) error {
		s.removeNode(n)
		return nil
	})
}

// TeardownOutOfBand undeploys the node as an operator would (`deleted`), also
// from deploying (the running deploy is abandoned): deleting for the undeploy
// time, then available with instance_uuid and instance_info cleared and VIFs
// detached. ErrInvalidState unless the node is deploying, wait call-back,
// active, deploy failed or error; no-op while already deleting.
func (s *Sim) TeardownOutOfBand(id string) error {
	return s.withNode(id, func(n *node, now time.Time) error {
		switch n.ProvisionState {
		case stateDeleting:
			return nil
		case stateDeploying, stateWaitCallback, stateActive, stateDeployFailed, stateError:
			n.failNext = nil
			s.startTeardown(n, now)
			return nil
		}
		return ErrInvalidState
	})
}

// SetMaintenance turns maintenance on (with a reason) or off (clearing the
// reason), bypassing the node lock. Idempotent.
func (s *Sim) SetMaintenance(id string, on bool, reason string) error {
	return s.withNode(id, func(n *node, now time.Time) error {
		s.setMaintenance(n, on, reason, now)
		return nil
	})
}

func (s *Sim) setMaintenance(n *node, on bool, reason string, now time.Time) {
	if !on && n.Maintenance {
		n.maintOffAt = now
	}
	n.Maintenance = on
	if on {
		n.MaintenanceReason = reason
	} else {
		n.MaintenanceReason = ""
		n.Fault = ""
	}
	n.touch(now)
}

// RemoveInstanceUUID clears the node's instance_uuid behind the service's
// back (state untouched). Idempotent.
func (s *Sim) RemoveInstanceUUID(id string) error {
	return s.withNode(id, func(n *node, now time.Time) error {
		s.setInstance(n, "")
		n.touch(now)
		return nil
	})
}

// SetNodeTimes overrides the deploy and undeploy durations of one node
// (a value < 0 keeps the current setting).
func (s *Sim) SetNodeTimes(id string, deploy, undeploy time.Duration) error {
	return s.withNode(id, func(n *node, _ time.Time) error {
		if deploy >= 0 {
			d := deploy
			n.deployTime = &d
		}
		if undeploy >= 0 {
			d := undeploy
			n.undeployTime = &d
		}
		return nil
	})
}
