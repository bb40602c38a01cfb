package core

import (
	"net/http"
)

// legacyVersion is the v2.0 entry Nova lists first: the legacy API, which
// Nova serves at /v2 (ingot answers its version document only; every
// client uses v2.1 with microversions).
func legacyVersion(r *http.Request) versionObject {
	return versionObject{ID: "v2.0", Status: "SUPPORTED", Version: "", MinVersion: "",
		Updated: "2011-01-21T11:33:21Z", Links: []Link{{Rel: "self", Href: BaseURL(r) + "/v2/"}}}
}

// LegacyVersionDoc answers GET /v2 and /v2/ (no auth), the document the
// v2.0 entry's self link names.
func (s *Env) LegacyVersionDoc(w http.ResponseWriter, r *Request) error {
	v := legacyVersion(r.Request)
	v.Links = append(v.Links, Link{Rel: "describedby", Type: "text/html", Href: "http://docs.openstack.org/"})
	v.MediaTypes = []MediaType{{Base: "application/json", Type: "application/vnd.openstack.compute+json;version=2"}}
	WriteJSON(w, http.StatusOK, versionBody{Version: v})
	return nil
}
