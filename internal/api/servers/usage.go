package servers

import (
	"context"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"time"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

// os-simple-tenant-usage (what each project's servers used over a period,
// in Nova's units: hours, and GB, MB and vCPUs times hours) and
// os-instance_usage_audit_log (the audit task's record: ingot runs none,
// so every period shows its one compute host as not run).

func (s *Service) UsageRoutes() {
	s.Compute("GET /v2.1/os-simple-tenant-usage", s.listTenantUsage)
	s.Compute("GET /v2.1/os-simple-tenant-usage/{tenant}", s.showTenantUsage)
	s.Compute("GET /v2.1/os-instance_usage_audit_log", s.listUsageAuditLog)
	s.Compute("GET /v2.1/os-instance_usage_audit_log/{before}", s.showUsageAuditLog)
}

// usageLayouts are the times Nova's usage routes read (start, end).
var usageLayouts = []string{"2006-01-02T15:04:05", "2006-01-02T15:04:05.999999", "2006-01-02 15:04:05.999999"}

// pyISO writes a time as Python's isoformat does (microseconds only when
// there are some, no zone): what Nova answers for start, stop and started_at.
func pyISO(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond()/1000 == 0 {
		return t.Format("2006-01-02T15:04:05")
	}
	return t.Format("2006-01-02T15:04:05.000000")
}

// usagePeriod reads start and end (each defaults to now), start before end.
func (s *Service) usagePeriod(q url.Values) (start, end time.Time, err error) {
	parse := func(key string) (time.Time, error) {
		v := q.Get(key)
		if v == "" {
			return s.Cfg.Clock.Now().UTC(), nil
		}
		for _, l := range usageLayouts {
			if t, err := time.Parse(l, v); err == nil {
				return t.UTC(), nil
			}
		}
		return time.Time{}, core.BadRequest("Invalid %s time %s: it must be in the form %%Y-%%m-%%dT%%H:%%M:%%S[.%%f].", key, v)
	}
	if start, err = parse("start"); err != nil {
		return start, end, err
	}
	if end, err = parse("end"); err != nil {
		return start, end, err
	}
	if !start.Before(end) && q.Get("start") != "" {
		return start, end, core.BadRequest("Invalid start time. The start time cannot occur after the end time.")
	}
	return start, end, nil
}

// serverUsage is one server's usage in the period (ok false: none).
func (s *Service) serverUsage(ctx context.Context, sv *lifecycle.Server, start, end, now time.Time) (serverUsage, float64, bool) {
	if sv.LaunchedAt.IsZero() || !sv.LaunchedAt.Before(end) {
		return serverUsage{}, 0, false
	}
	terminated := time.Time{}
	if lifecycle.Nova(sv).ShowsDelete() {
		terminated = sv.DeleteRequestedAt
		if terminated.IsZero() {
			terminated = sv.UpdatedAt
		}
		if terminated.Before(start) {
			return serverUsage{}, 0, false
		}
	}
	from, to := sv.LaunchedAt, end
	if from.Before(start) {
		from = start
	}
	if !terminated.IsZero() && terminated.Before(to) {
		to = terminated
	}
	hours := to.Sub(from).Hours()
	flavor := sv.Spec.FlavorID
	if f, err := s.Cfg.Store.GetFlavor(ctx, sv.Spec.FlavorID); err == nil {
		flavor = f.Name
	}
	u := serverUsage{InstanceID: sv.ID, Name: sv.Name, TenantID: sv.ProjectID, Flavor: flavor,
		Hours: hours, LocalGB: sv.Spec.RootGB, MemoryMB: sv.Spec.RAMMB, VCPUs: sv.Spec.VCPUs,
		StartedAt: pyISO(sv.LaunchedAt), State: lifecycle.Nova(sv).VMState}
	uptime := now.Sub(sv.LaunchedAt)
	if !terminated.IsZero() {
		ended := pyISO(terminated)
		u.State, u.EndedAt, uptime = "terminated", &ended, terminated.Sub(sv.LaunchedAt)
	}
	u.Uptime = int(uptime.Seconds())
	return u, hours, true
}

// serverUsage is one server's entry of server_usages.
type serverUsage struct {
	EndedAt    *string `json:"ended_at"`
	Flavor     string  `json:"flavor"`
	Hours      float64 `json:"hours"`
	InstanceID string  `json:"instance_id"`
	LocalGB    int     `json:"local_gb"`
	MemoryMB   int     `json:"memory_mb"`
	Name       string  `json:"name"`
	StartedAt  string  `json:"started_at"`
	State      string  `json:"state"`
	TenantID   string  `json:"tenant_id"`
	Uptime     int     `json:"uptime"`
	VCPUs      int     `json:"vcpus"`
}

// tenantUsage sums the usages of one project's servers.
type tenantUsage struct {
	project                        string
	hours, localGB, memoryMB, vcpu float64
	servers                        []serverUsage
}

func (u *tenantUsage) add(su serverUsage, hours float64) {
	u.hours += hours
	u.localGB += float64(su.LocalGB) * hours
	u.memoryMB += float64(su.MemoryMB) * hours
	u.vcpu += float64(su.VCPUs) * hours
	u.servers = append(u.servers, su)
}

// tenantUsageView is a project's usage; server_usages only when detailed.
type tenantUsageView struct {
	ServerUsages       *[]serverUsage `json:"server_usages,omitempty"`
	Start              string         `json:"start"`
	Stop               string         `json:"stop"`
	TenantID           string         `json:"tenant_id"`
	TotalHours         float64        `json:"total_hours"`
	TotalLocalGBUsage  float64        `json:"total_local_gb_usage"`
	TotalMemoryMBUsage float64        `json:"total_memory_mb_usage"`
	TotalVCPUsUsage    float64        `json:"total_vcpus_usage"`
}

func (u *tenantUsage) view(start, end time.Time, detailed bool) tenantUsageView {
	v := tenantUsageView{TenantID: u.project, Start: pyISO(start), Stop: pyISO(end),
		TotalHours: u.hours, TotalLocalGBUsage: u.localGB, TotalMemoryMBUsage: u.memoryMB, TotalVCPUsUsage: u.vcpu}
	if detailed {
		servers := u.servers
		if servers == nil {
			servers = []serverUsage{}
		}
		v.ServerUsages = &servers
	}
	return v
}

// usages reads the servers of project ("" every project) that ran in the
// period, deleted ones included, in pages of maxPage (from 2.40 limit and
// marker bound the servers read, as Nova pages by instance).
func (s *Service) usages(r *core.Request, project string, start, end time.Time) (map[string]*tenantUsage, string, error) {
	q := r.URL.Query()
	opts := store.ListOptions{ProjectID: project, IncludeDeleted: true, Limit: core.MaxPage}
	want := -1
	if r.MV.AtLeast(mvUsagePaging) {
		if l := q.Get("limit"); q.Has("limit") {
			n, err := strconv.Atoi(l)
			if err != nil || n < 0 {
				return nil, "", core.BadRequest("Invalid input for query parameters limit. Value: %s. It must be a non-negative integer.", l)
			}
			want = min(n, core.MaxPage)
		}
		if m := q.Get("marker"); q.Has("marker") {
			if !core.IsUUID(m) {
				return nil, "", core.BadRequest("marker [%s] not found", m)
			}
			opts.Marker = m
		}
	}
	now := s.Cfg.Clock.Now().UTC()
	out := map[string]*tenantUsage{}
	read, last := 0, ""
	for want != 0 {
		batch, err := s.list(r, opts)
		if err != nil {
			return nil, "", err
		}
		for _, sv := range batch {
			su, hours, ok := s.serverUsage(r.Context(), sv, start, end, now)
			if !ok {
				continue
			}
			u := out[sv.ProjectID]
			if u == nil {
				u = &tenantUsage{project: sv.ProjectID}
				out[sv.ProjectID] = u
			}
			u.add(su, hours)
			read++
			last = sv.ID
			if read == want {
				return out, last, nil
			}
		}
		if len(batch) < opts.Limit {
			break
		}
		opts.Marker = batch[len(batch)-1].ID
	}
	return out, "", nil
}

// usageLinks is the next link of a page that stopped at its limit.
func usageLinks(r *core.Request, last string) []core.Link {
	if last == "" {
		return nil
	}
	q := r.URL.Query()
	q.Set("marker", last)
	u := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
	return []core.Link{{Rel: "next", Href: core.BaseURL(r.Request) + u.String()}}
}

func (s *Service) listTenantUsage(w http.ResponseWriter, r *core.Request) error {
	if err := r.Authorize(policy.TenantUsageList, r.Own()); err != nil {
		return err
	}
	q := r.URL.Query()
	start, end, err := s.usagePeriod(q)
	if err != nil {
		return err
	}
	all, last, err := s.usages(r, "", start, end)
	if err != nil {
		return err
	}
	projects := make([]string, 0, len(all))
	for p := range all {
		projects = append(projects, p)
	}
	sort.Strings(projects)
	out := make([]tenantUsageView, 0, len(projects))
	for _, p := range projects {
		out = append(out, all[p].view(start, end, q.Get("detailed") == "1"))
	}
	core.WriteJSON(w, http.StatusOK, struct {
		TenantUsages []tenantUsageView `json:"tenant_usages"`
		Links        []core.Link       `json:"tenant_usages_links,omitempty"`
	}{out, usageLinks(r, last)})
	return nil
}

func (s *Service) showTenantUsage(w http.ResponseWriter, r *core.Request) error {
	project := r.PathValue("tenant")
	if err := r.Authorize(policy.TenantUsageShow, core.Target(project, "")); err != nil {
		return err
	}
	start, end, err := s.usagePeriod(r.URL.Query())
	if err != nil {
		return err
	}
	all, last, err := s.usages(r, project, start, end)
	if err != nil {
		return err
	}
	u := all[project]
	if u == nil {
		// Nova answers an empty object for a project without usage.
		core.WriteJSON(w, http.StatusOK, struct {
			TenantUsage struct{} `json:"tenant_usage"`
		}{})
		return nil
	}
	core.WriteJSON(w, http.StatusOK, struct {
		TenantUsage tenantUsageView `json:"tenant_usage"`
		Links       []core.Link     `json:"tenant_usage_links,omitempty"`
	}{u.view(start, end, true), usageLinks(r, last)})
	return nil
}

// auditPeriod is Nova's last completed audit period before t with its
// default unit, the month: [first of the previous month, first of this
// month), one month further back when t is the first instant of a month.
func auditPeriod(t time.Time) (begin, end time.Time) {
	t = t.UTC()
	end = time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	if !end.Before(t) {
		end = end.AddDate(0, -1, 0)
	}
	return end.AddDate(0, -1, 0), end
}

// auditLog is the audit log of the period before t: ingot's one compute
// host, whose audit task never ran.
func auditLog(t time.Time) auditLogView {
	begin, end := auditPeriod(t)
	return auditLogView{PeriodBeginning: begin.Format("2006-01-02 15:04:05"), PeriodEnding: end.Format("2006-01-02 15:04:05"),
		NumHosts: 1, NumHostsNotRun: 1, HostsNotRun: []string{core.HostName},
		OverallStatus: "0 of 1 hosts done. 0 errors."}
}

type auditLogView struct {
	HostsNotRun     []string `json:"hosts_not_run"`
	Log             struct{} `json:"log"`
	NumHosts        int      `json:"num_hosts"`
	NumHostsDone    int      `json:"num_hosts_done"`
	NumHostsNotRun  int      `json:"num_hosts_not_run"`
	NumHostsRunning int      `json:"num_hosts_running"`
	OverallStatus   string   `json:"overall_status"`
	PeriodBeginning string   `json:"period_beginning"`
	PeriodEnding    string   `json:"period_ending"`
	TotalErrors     int      `json:"total_errors"`
	TotalInstances  int      `json:"total_instances"`
}

func (s *Service) listUsageAuditLog(w http.ResponseWriter, r *core.Request) error {
	if err := r.Authorize(policy.UsageAuditLogList, r.Own()); err != nil {
		return err
	}
	core.WriteJSON(w, http.StatusOK, struct {
		Logs auditLogView `json:"instance_usage_audit_logs"`
	}{auditLog(s.Cfg.Clock.Now())})
	return nil
}

// showUsageAuditLog reads the before time as Nova does
// ("%Y-%m-%d %H:%M:%S[.%f]"); anything else is a 400.
func (s *Service) showUsageAuditLog(w http.ResponseWriter, r *core.Request) error {
	if err := r.Authorize(policy.UsageAuditLogShow, r.Own()); err != nil {
		return err
	}
	v := r.PathValue("before")
	var before time.Time
	var err error
	for _, l := range []string{"2006-01-02 15:04:05", "2006-01-02 15:04:05.999999"} {
		if before, err = time.Parse(l, v); err == nil {
			break
		}
	}
	if err != nil {
		return core.BadRequest("Invalid timestamp for date %s", v)
	}
	core.WriteJSON(w, http.StatusOK, struct {
		Log auditLogView `json:"instance_usage_audit_log"`
	}{auditLog(before)})
	return nil
}
