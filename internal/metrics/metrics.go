// Package metrics holds ingot's Prometheus collectors on a registry of its
// own (no global state), and the hooks that feed them.
package metrics

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ingot-dev/ingot/internal/ironic"
	"github.com/ingot-dev/ingot/internal/lifecycle"
)

// Metrics is the set of collectors.
type Metrics struct {
	reg            *prometheus.Registry
	servers        *prometheus.GaugeVec
	buildSeconds   prometheus.Histogram
	deleteSeconds  prometheus.Histogram
	ironicCalls    *prometheus.CounterVec
	ironicSeconds  *prometheus.HistogramVec
	tickSeconds    prometheus.Histogram
	fastTick       prometheus.Histogram
	tickServers    prometheus.Gauge
	pastDeadline   prometheus.Gauge
	transitions    *prometheus.CounterVec
	faults         *prometheus.CounterVec
	leasesHeld     prometheus.Gauge
	leaseTakeovers prometheus.Counter
	notifyUp       prometheus.Gauge
	notifyEvents   *prometheus.CounterVec
	notifyLag      prometheus.Histogram
	notifyOnce     sync.Once
	outboxDepth    prometheus.Gauge
	outboxAge      prometheus.Gauge
	published      prometheus.Counter
	publishErrors  prometheus.Counter
	countByPhaseFn func(ctx context.Context) (map[lifecycle.Phase]int, error)
	// pastDue mirrors pastDeadline for readers that should not gather the
	// registry (the console's fleet page).
	pastDue atomic.Int64
}

// New registers every collector. countByPhase feeds the servers-by-state
// gauge at scrape time.
func New(countByPhase func(ctx context.Context) (map[lifecycle.Phase]int, error)) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), countByPhaseFn: countByPhase}
	buckets := []float64{.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600}
	m.servers = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "ingot_servers", Help: "Servers by lifecycle phase."}, []string{"phase"})
	m.buildSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "ingot_build_duration_seconds", Help: "From create to ACTIVE.", Buckets: buckets})
	m.deleteSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "ingot_delete_duration_seconds", Help: "From delete request to deleted.", Buckets: buckets})
	m.ironicCalls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ingot_ironic_calls_total", Help: "Ironic API calls by operation and outcome."}, []string{"op", "outcome"})
	m.ironicSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "ingot_ironic_call_duration_seconds", Help: "Ironic API call latency.", Buckets: prometheus.DefBuckets}, []string{"op"})
	m.tickSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "ingot_reconcile_tick_seconds", Help: "Time of one reconcile tick.", Buckets: prometheus.DefBuckets})
	m.fastTick = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "ingot_reconcile_fast_tick_seconds",
		Help: "Time of one fast tick (only the nodes waited on).", Buckets: prometheus.DefBuckets})
	m.tickServers = prometheus.NewGauge(prometheus.GaugeOpts{Name: "ingot_reconcile_tick_servers", Help: "Servers looked at in the last tick."})
	m.pastDeadline = prometheus.NewGauge(prometheus.GaugeOpts{Name: "ingot_servers_past_deadline", Help: "Non-stable servers past their deadline plus one tick (must be 0)."})
	m.transitions = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ingot_phase_transitions_total", Help: "Lifecycle transitions by target phase."}, []string{"phase"})
	m.faults = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ingot_faults_total", Help: "Failed attempts and errors by reason."}, []string{"reason"})
	m.leasesHeld = prometheus.NewGauge(prometheus.GaugeOpts{Name: "ingot_leases_held", Help: "Shard leases this replica holds."})
	m.leaseTakeovers = prometheus.NewCounter(prometheus.CounterOpts{Name: "ingot_lease_takeovers_total", Help: "Shard leases taken over from another holder (expired or released)."})
	m.notifyUp = prometheus.NewGauge(prometheus.GaugeOpts{Name: "ingot_notifications_connected",
		Help: "1 while Ironic's notifications are consumed from the bus, 0 while ingot relies on polling alone."})
	m.notifyEvents = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ingot_notification_events_total",
		Help: "Ironic notifications received, by whether they woke a server of this replica (woken, ignored) or were malformed (dropped)."}, []string{"outcome"})
	m.notifyLag = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "ingot_notification_lag_seconds",
		Help: "From Ironic's timestamp of a notification to its receipt (clocks of two hosts).", Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}})
	m.outboxDepth = prometheus.NewGauge(prometheus.GaugeOpts{Name: "ingot_notifications_outbox",
		Help: "Notifications recorded and not yet confirmed by the message bus (this replica's last look; 0 where another drains)."})
	m.outboxAge = prometheus.NewGauge(prometheus.GaugeOpts{Name: "ingot_notifications_outbox_oldest_seconds",
		Help: "Age of the oldest notification waiting in the outbox (0: none waits)."})
	m.published = prometheus.NewCounter(prometheus.CounterOpts{Name: "ingot_notifications_published_total",
		Help: "Notifications the message bus confirmed."})
	m.publishErrors = prometheus.NewCounter(prometheus.CounterOpts{Name: "ingot_notifications_publish_errors_total",
		Help: "Failed connections, publishes and confirms of notifications (each retried)."})
	m.reg.MustRegister(m.servers, m.buildSeconds, m.deleteSeconds, m.ironicCalls, m.ironicSeconds, m.tickSeconds, m.fastTick,
		m.tickServers, m.pastDeadline, m.transitions, m.faults, m.leasesHeld, m.leaseTakeovers,
		m.outboxDepth, m.outboxAge, m.published, m.publishErrors,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves /metrics, refreshing the servers-by-phase gauge first.
func (m *Metrics) Handler() http.Handler {
	h := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m.countByPhaseFn != nil {
			if counts, err := m.countByPhaseFn(r.Context()); err == nil {
				m.servers.Reset()
				for p, n := range counts {
					m.servers.WithLabelValues(string(p)).Set(float64(n))
				}
			}
		}
		h.ServeHTTP(w, r)
	})
}

// IronicCall records one Ironic call (the adapter's Observer).
func (m *Metrics) IronicCall(op string, err error, d time.Duration) {
	m.ironicCalls.WithLabelValues(op, outcome(err)).Inc()
	m.ironicSeconds.WithLabelValues(op).Observe(d.Seconds())
}

func outcome(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, ironic.ErrNotFound):
		return "not_found"
	case errors.Is(err, ironic.ErrNodeLocked):
		return "locked"
	case errors.Is(err, ironic.ErrNodeAssociated), errors.Is(err, ironic.ErrInstanceAssociated):
		return "associated"
	case errors.Is(err, ironic.ErrUnavailable):
		return "unavailable"
	case errors.Is(err, ironic.ErrInvalidState):
		return "invalid_state"
	case errors.Is(err, ironic.ErrInvalid):
		return "invalid"
	}
	return "error"
}

// Tick records one reconcile tick.
func (m *Metrics) Tick(d time.Duration, servers int) {
	m.tickSeconds.Observe(d.Seconds())
	m.tickServers.Set(float64(servers))
}

// FastTick records one fast tick.
func (m *Metrics) FastTick(d time.Duration, _ int) { m.fastTick.Observe(d.Seconds()) }

// PastDue records how many servers were past their deadline in the last tick.
func (m *Metrics) PastDue(n int) {
	m.pastDeadline.Set(float64(n))
	m.pastDue.Store(int64(n))
}

// PastDeadline is the last tick's ingot_servers_past_deadline (must be 0).
func (m *Metrics) PastDeadline() int { return int(m.pastDue.Load()) }

// Transition records a phase change (called after the write succeeded).
func (m *Metrics) Transition(before, after *lifecycle.Server) {
	m.transitions.WithLabelValues(string(after.Phase)).Inc()
	switch after.Phase {
	case lifecycle.PhaseActive:
		m.buildSeconds.Observe(after.UpdatedAt.Sub(after.CreatedAt).Seconds())
	case lifecycle.PhaseDeleted:
		if !after.DeleteRequestedAt.IsZero() {
			m.deleteSeconds.Observe(after.UpdatedAt.Sub(after.DeleteRequestedAt).Seconds())
		}
	case lifecycle.PhaseReleasing, lifecycle.PhaseError:
		if after.Fault != nil {
			m.faults.WithLabelValues(string(after.Fault.Reason)).Inc()
		}
	}
}

// LeasesHeld records how many shard leases this replica holds.
func (m *Metrics) LeasesHeld(n int) { m.leasesHeld.Set(float64(n)) }

// LeaseTakeovers counts leases taken over from another holder.
func (m *Metrics) LeaseTakeovers(n int) { m.leaseTakeovers.Add(float64(n)) }

// OutboxDepth records the notifications waiting and the oldest one's age.
func (m *Metrics) OutboxDepth(n int, oldest time.Duration) {
	m.outboxDepth.Set(float64(n))
	m.outboxAge.Set(oldest.Seconds())
}

// Published counts notifications the bus confirmed.
func (m *Metrics) Published(n int) { m.published.Add(float64(n)) }

// PublishError counts a failed attempt to publish notifications.
func (m *Metrics) PublishError(error) { m.publishErrors.Inc() }

// Registry exposes the registry (tests read values from it).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// EnableNotifications registers the notification consumer's metrics, once,
// when ironic.notifications is on: without a consumer there is no
// ingot_notifications_connected series for IngotNotificationsDown to see.
func (m *Metrics) EnableNotifications() {
	m.notifyOnce.Do(func() { m.reg.MustRegister(m.notifyUp, m.notifyEvents, m.notifyLag) })
}

// NotificationsConnected records whether the notification consumer is
// connected.
func (m *Metrics) NotificationsConnected(up bool) {
	v := 0.0
	if up {
		v = 1
	}
	m.notifyUp.Set(v)
}

// NotificationEvent records one notification received: whether it woke a
// server of this replica.
func (m *Metrics) NotificationEvent(woke bool) {
	if woke {
		m.notifyEvents.WithLabelValues("woken").Inc()
	} else {
		m.notifyEvents.WithLabelValues("ignored").Inc()
	}
}

// NotificationLag records a notification's lag, from Ironic's timestamp to
// its receipt.
func (m *Metrics) NotificationLag(lag time.Duration) { m.notifyLag.Observe(max(lag, 0).Seconds()) }

// NotificationDropped records a malformed notification.
func (m *Metrics) NotificationDropped() { m.notifyEvents.WithLabelValues("dropped").Inc() }
