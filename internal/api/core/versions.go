package core

import (
	"net/http"
)

// Link is a links entry of a body.
type Link struct {
	Rel  string `json:"rel"`
	Href string `json:"href"`
	Type string `json:"type,omitempty"`
}

// MediaType is a media-types entry of a version document.
type MediaType struct {
	Base string `json:"base"`
	Type string `json:"type"`
}

type versionsBody struct {
	Versions []versionObject `json:"versions"`
}

type versionBody struct {
	Version versionObject `json:"version"`
}

type versionObject struct {
	ID         string      `json:"id"`
	Status     string      `json:"status"`
	Version    string      `json:"version"`
	MinVersion string      `json:"min_version"`
	Updated    string      `json:"updated"`
	Links      []Link      `json:"links"`
	MediaTypes []MediaType `json:"media-types,omitempty"`
}

// computeVersion is the v2.1 document. The SDK needs id, status and a self
// link, and without version/min_version it sends no microversion (docs/clients.md).
func computeVersion(r *http.Request) versionObject {
	return versionObject{
		ID: "v2.1", Status: "CURRENT",
		Version: maxVersion.String(), MinVersion: minVersion.String(),
		Updated: "2013-07-23T11:33:21Z",
		Links:   []Link{{Rel: "self", Href: BaseURL(r) + "/v2.1/"}},
		MediaTypes: []MediaType{{Base: "application/json",
			Type: "application/vnd.openstack.compute+json;version=2.1"}},
	}
}

// VersionsList answers GET /: the list for clients given the unversioned
// root, as Nova's: v2.0 first, then v2.1, without media types (those are in
// the single-version documents).
func (s *Env) VersionsList(w http.ResponseWriter, r *Request) error {
	v21 := computeVersion(r.Request)
	v21.MediaTypes = nil
	WriteJSON(w, http.StatusOK, versionsBody{Versions: []versionObject{legacyVersion(r.Request), v21}})
	return nil
}

// VersionDoc answers GET /v2.1 and /v2.1/, unauthenticated: without it every
// SDK-based command fails discovery. Nova's has a describedby link too.
func (s *Env) VersionDoc(w http.ResponseWriter, r *Request) error {
	v := computeVersion(r.Request)
	v.Links = append(v.Links, Link{Rel: "describedby", Type: "text/html", Href: "http://docs.openstack.org/"})
	WriteJSON(w, http.StatusOK, versionBody{Version: v})
	return nil
}
