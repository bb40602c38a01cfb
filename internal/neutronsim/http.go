package neutronsim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// fault is a Neutron error answer.
type fault struct {
	status       int
	typ, message string
}

func (f *fault) Error() string { return f.typ + ": " + f.message }

// notFound is Neutron's 404, e.g. notFound("Port", "port", id) is
// PortNotFound "Port <id> could not be found.".
func notFound(typ, what, id string) *fault {
	return &fault{http.StatusNotFound, typ + "NotFound", fmt.Sprintf("%s %s could not be found.", what, id)}
}

func policy(rule string) *fault {
	return &fault{http.StatusForbidden, "PolicyNotAuthorized", fmt.Sprintf("(rule:%s) is disallowed by policy", rule)}
}

func badRequest(msg string) *fault {
	return &fault{http.StatusBadRequest, "HTTPBadRequest", msg}
}

// ServeHTTP answers Neutron's v2.0 API for what the adapter uses.
func (s *Sim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/" { // the version document clients discover
		writeJSON(w, http.StatusOK, map[string]any{"versions": []map[string]any{{"id": "v2.0", "status": "CURRENT",
			"links": []map[string]string{{"rel": "self", "href": "http://" + r.Host + "/v2.0/"}}}}})
		return
	}
	who, ok := s.opts.Identify(r.Header.Get("X-Auth-Token"))
	if !ok {
		w.Header().Set("WWW-Authenticate", "Keystone uri='keystone'")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error": {"code": 401, "title": "Unauthorized", "message": "The request you have made requires authentication."}}`))
		return
	}
	parts := strings.Split(strings.Trim(strings.TrimPrefix(r.URL.Path, "/v2.0"), "/"), "/")
	var body map[string]any
	if r.Body != nil && (r.Method == http.MethodPost || r.Method == http.MethodPut) {
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			s.fail(w, badRequest("Malformed request body"))
			return
		}
	}
	s.mu.Lock()
	status, out, err := s.route(who, r.Method, parts, r.URL.Query(), body)
	s.mu.Unlock()
	if err != nil {
		s.fail(w, err)
		return
	}
	if status == http.StatusNoContent {
		w.WriteHeader(status)
		return
	}
	writeJSON(w, status, out)
}

func (s *Sim) fail(w http.ResponseWriter, f *fault) {
	writeJSON(w, f.status, map[string]any{"NeutronError": map[string]string{"type": f.typ, "message": f.message, "detail": ""}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

type query interface{ Get(string) string }

func (s *Sim) route(who Identity, method string, parts []string, q query, body map[string]any) (int, any, *fault) {
	res, id := parts[0], ""
	if len(parts) > 1 {
		id = parts[1]
	}
	switch {
	case res == "networks" && method == http.MethodGet && id == "":
		return s.listNetworks(who)
	case res == "networks" && method == http.MethodGet:
		return s.getNetwork(who, id)
	case res == "subnets" && method == http.MethodGet && id == "":
		return s.listSubnets(who, q.Get("network_id"))
	case res == "ports" && method == http.MethodGet && id == "":
		return s.listPorts(who, q)
	case res == "ports" && method == http.MethodGet:
		p, f := s.visiblePort(who, id)
		if f != nil {
			return 0, nil, f
		}
		return http.StatusOK, map[string]any{"port": s.renderPort(who, p)}, nil
	case res == "ports" && method == http.MethodPost && id == "":
		return s.createPort(who, sub(body, "port"))
	case res == "ports" && method == http.MethodPut:
		return s.updatePort(who, id, sub(body, "port"))
	case res == "ports" && method == http.MethodDelete:
		return s.deletePort(who, id)
	case res == "security-groups" && method == http.MethodGet && id == "":
		return s.listGroups(who, q.Get("project_id"))
	case res == "security-groups" && method == http.MethodGet:
		return s.getGroup(who, id)
	}
	return 0, nil, &fault{http.StatusNotFound, "HTTPNotFound", "The resource could not be found."}
}

func sub(body map[string]any, key string) map[string]any {
	m, _ := body[key].(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	return m
}
