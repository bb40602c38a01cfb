package servers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/lifecycle"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
)

// Server tags (2.26), as Nova's os-server-tags: kept sorted in the
// server's Spec (they never reach the node), at most 50, each 1–60
// characters without '/' or ','. Nova checks the vm_state of a tag write
// (active, stopped; ingot has no paused or suspended) but not the lock.

const (
	maxTags   = 50
	maxTagLen = 60
)

func (s *Service) tagRoutes() {
	s.Compute("GET /v2.1/servers/{id}/tags", s.listTags)
	s.Compute("PUT /v2.1/servers/{id}/tags", s.replaceTags)
	s.Compute("DELETE /v2.1/servers/{id}/tags", s.deleteTags)
	s.Compute("GET /v2.1/servers/{id}/tags/{tag}", s.checkTag)
	s.Compute("PUT /v2.1/servers/{id}/tags/{tag}", s.addTag)
	s.Compute("DELETE /v2.1/servers/{id}/tags/{tag}", s.deleteTag)
}

// tagsOf is a server's tags, never nil (the body shows a list).
func tagsOf(sv *lifecycle.Server) []string {
	if sv.Spec.Tags == nil {
		return []string{}
	}
	return sv.Spec.Tags
}

// checkTagName is Nova's parameter_types.tag, and no control characters
// (Nova accepts them; a NUL, newline or ESC in a tag would reach every
// terminal and log that shows it, and PostgreSQL refuses a NUL).
func checkTagName(tag string) error {
	if !validTag(tag) {
		return core.BadRequest("Tag '%s' is invalid. It must be a non empty string without characters '/' and ','. "+
			"Validation error message: it must be 1 to %d characters without '/', ',' or control characters.", tag, maxTagLen)
	}
	return nil
}

func validTag(tag string) bool {
	return tag != "" && utf8.RuneCountInString(tag) <= maxTagLen && !strings.ContainsAny(tag, "/,") && !core.HasControl(tag)
}

// parseTags reads a list of tags (PUT …/tags, and create from 2.52):
// sorted, duplicates dropped.
func parseTags(raw json.RawMessage, field string) ([]string, error) {
	var tags []string
	if json.Unmarshal(raw, &tags) != nil || tags == nil {
		return nil, core.BadRequest("Invalid input for field/attribute %s. Value: %s. It is not an array of strings.", field, raw)
	}
	if len(tags) > maxTags {
		return nil, core.BadRequest("Invalid input for field/attribute %s. Value: %s. It has more than %d items.", field, raw, maxTags)
	}
	for _, t := range tags {
		if !validTag(t) {
			return nil, core.BadRequest("Invalid input for field/attribute %s. Value: %s. Tag %q must be 1 to %d characters without '/', ',' or control characters.", field, raw, t, maxTagLen)
		}
	}
	slices.Sort(tags)
	return slices.Compact(tags), nil
}

// tagServer is the server of a tag route: 404 below 2.26 (Nova has no
// such route there), then the server and its rule.
func (s *Service) tagServer(r *core.Request, rule string) (*lifecycle.Server, error) {
	if !r.MV.AtLeast(mvTags) {
		return nil, core.NotFound("The resource could not be found.")
	}
	return s.visibleServer(r, r.PathValue("id"), rule)
}

// tagState is Nova's state check of a tag write.
func tagState(sv *lifecycle.Server, action string) error {
	switch vm := lifecycle.Nova(sv).VMState; vm {
	case "active", "stopped":
		return nil
	default:
		c := lifecycle.StateConflict{Op: lifecycle.OpKind(action), Attr: "vm_state", State: vm}
		return core.Conflict("%s", c.Message(sv.ID))
	}
}

// writeTags changes the tags with change on the fresh record (after the
// state check, again) and returns the record as written.
func (s *Service) writeTags(r *core.Request, sv *lifecycle.Server, action string, change func(cur *lifecycle.Server) error) (*lifecycle.Server, error) {
	if err := tagState(sv, action); err != nil {
		return nil, err
	}
	now := s.Cfg.Clock.Now().UTC()
	out, err := s.Cfg.Store.UpdateServer(r.Context(), sv.ID, nil, func(cur *lifecycle.Server) error {
		if !lifecycle.Nova(cur).Visible {
			return core.NotFound("Instance %s could not be found.", cur.ID)
		}
		if err := tagState(cur, action); err != nil {
			return err
		}
		if err := change(cur); err != nil {
			return err
		}
		cur.UpdatedAt = now
		return nil
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, core.NotFound("Instance %s could not be found.", sv.ID)
	}
	if err != nil {
		return nil, fmt.Errorf("%s of server %s: %w", action, sv.ID, err)
	}
	return out, nil
}

func (s *Service) listTags(w http.ResponseWriter, r *core.Request) error {
	sv, err := s.tagServer(r, policy.ServerTagsIndex)
	if err != nil {
		return err
	}
	core.WriteJSON(w, http.StatusOK, tagsBody{Tags: tagsOf(sv)})
	return nil
}

func (s *Service) replaceTags(w http.ResponseWriter, r *core.Request) error {
	if !r.MV.AtLeast(mvTags) {
		return core.NotFound("The resource could not be found.")
	}
	body, err := core.ReadJSONObject(r.Request)
	if err != nil {
		return err
	}
	for k := range body {
		if k != "tags" {
			return core.BadRequest("Additional properties are not allowed ('%s' was unexpected)", k)
		}
	}
	raw, ok := body["tags"]
	if !ok {
		return core.BadRequest("'tags' is a required property")
	}
	tags, err := parseTags(raw, "tags")
	if err != nil {
		return err
	}
	sv, err := s.tagServer(r, policy.ServerTagsUpdateAll)
	if err != nil {
		return err
	}
	out, err := s.writeTags(r, sv, "update tags", func(cur *lifecycle.Server) error {
		cur.Spec.Tags = tags
		return nil
	})
	if err != nil {
		return err
	}
	core.WriteJSON(w, http.StatusOK, tagsBody{Tags: tagsOf(out)})
	return nil
}

func (s *Service) deleteTags(w http.ResponseWriter, r *core.Request) error {
	sv, err := s.tagServer(r, policy.ServerTagsDeleteAll)
	if err != nil {
		return err
	}
	if _, err := s.writeTags(r, sv, "delete tags", func(cur *lifecycle.Server) error {
		cur.Spec.Tags = nil
		return nil
	}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// checkTag answers 204 when the server has the tag, 404 otherwise.
func (s *Service) checkTag(w http.ResponseWriter, r *core.Request) error {
	sv, err := s.tagServer(r, policy.ServerTagsShow)
	if err != nil {
		return err
	}
	tag := r.PathValue("tag")
	if !slices.Contains(sv.Spec.Tags, tag) {
		return core.NotFound("Server %s has no tag '%s'", sv.ID, tag)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// addTag answers 201 with the tag's Location when it adds it, 204 when
// the server already has it.
func (s *Service) addTag(w http.ResponseWriter, r *core.Request) error {
	if !r.MV.AtLeast(mvTags) {
		return core.NotFound("The resource could not be found.")
	}
	if b, err := io.ReadAll(r.Body); err != nil {
		return core.BadRequest("could not read the request body: %v", err)
	} else if v := strings.TrimSpace(string(b)); v != "" && v != "null" {
		return core.BadRequest("Invalid input for field/attribute. Value: %s. It is not of type 'null'.", v)
	}
	sv, err := s.tagServer(r, policy.ServerTagsUpdate)
	if err != nil {
		return err
	}
	tag := r.PathValue("tag")
	if err := tagState(sv, "update tag"); err != nil {
		return err
	}
	if err := checkTagName(tag); err != nil {
		return err
	}
	added := false
	if _, err := s.writeTags(r, sv, "update tag", func(cur *lifecycle.Server) error {
		if slices.Contains(cur.Spec.Tags, tag) {
			return nil
		}
		if len(cur.Spec.Tags) >= maxTags {
			return core.BadRequest("The number of tags exceeded the per-server limit %d", maxTags)
		}
		cur.Spec.Tags = append(cur.Spec.Tags, tag)
		slices.Sort(cur.Spec.Tags)
		added = true
		return nil
	}); err != nil {
		return err
	}
	if !added {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	w.Header().Set("Location", core.BaseURL(r.Request)+"/v2.1/servers/"+sv.ID+"/tags/"+url.PathEscape(tag))
	w.WriteHeader(http.StatusCreated)
	return nil
}

func (s *Service) deleteTag(w http.ResponseWriter, r *core.Request) error {
	sv, err := s.tagServer(r, policy.ServerTagsDelete)
	if err != nil {
		return err
	}
	tag := r.PathValue("tag")
	if _, err := s.writeTags(r, sv, "delete tag", func(cur *lifecycle.Server) error {
		i := slices.Index(cur.Spec.Tags, tag)
		if i < 0 {
			return core.NotFound("Instance %s has no tag '%s'", cur.ID, tag)
		}
		cur.Spec.Tags = slices.Delete(cur.Spec.Tags, i, i+1)
		return nil
	}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// parseCreateExtras reads the create members of later microversions:
// description (2.19) and tags (2.52); before them they are unknown
// members (400), as in Nova.
func parseCreateExtras(r *core.Request, fields map[string]json.RawMessage, c *createRequest) error {
	if raw, ok := fields["description"]; ok {
		if !r.MV.AtLeast(mvDescription) {
			return core.BadRequest("Invalid input for field/attribute server. Additional properties are not allowed ('description' was unexpected).")
		}
		d, err := parseDescription(raw)
		if err != nil {
			return err
		}
		c.description = d
	}
	if raw, ok := fields["tags"]; ok {
		if !r.MV.AtLeast(mvCreateTags) {
			return core.BadRequest("Invalid input for field/attribute server. Additional properties are not allowed ('tags' was unexpected).")
		}
		tags, err := parseTags(raw, "tags")
		if err != nil {
			return err
		}
		if len(tags) > 0 {
			c.tags = tags
		}
	}
	return nil
}
