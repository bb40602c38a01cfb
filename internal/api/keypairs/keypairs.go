package keypairs

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"net/http"
	"net/url"
	"regexp"
	"strconv"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/policy"
	"github.com/ingot-dev/ingot/internal/store"
	"golang.org/x/crypto/ssh"
)

// os-keypairs, in Nova's shapes for microversions 2.1–2.92: a keypair
// belongs to one user; type appears from 2.2, user_id (an admin acting for
// another user) from 2.10, paging from 2.35; from 2.92 the public key must
// be imported (no generated private keys) and names may also hold '@' and '.'.

var (
	keypairName20  = regexp.MustCompile(`^[a-zA-Z0-9 _-]{1,255}$`)
	keypairName292 = regexp.MustCompile(`^[a-zA-Z0-9 @._-]{1,255}$`)
)

type keypairView struct {
	Name        string `json:"name"`
	PublicKey   string `json:"public_key"`
	Fingerprint string `json:"fingerprint"`
	UserID      string `json:"user_id,omitempty"`
	Type        string `json:"type,omitempty"`
	PrivateKey  string `json:"private_key,omitempty"`
}

// keypairUser is whose keypairs a request acts on: the caller's, or from
// 2.10 the user_id an admin names (the policy decides).
func keypairUser(r *core.Request, fromBody string) string {
	if !r.MV.AtLeast(mvKeypairUser) {
		return r.Ident.UserID
	}
	if fromBody != "" {
		return fromBody
	}
	if u := r.URL.Query().Get("user_id"); u != "" {
		return u
	}
	return r.Ident.UserID
}

func (s *Service) keypairView(r *core.Request, kp store.Keypair) keypairView {
	v := keypairView{Name: kp.Name, PublicKey: kp.PublicKey, Fingerprint: kp.Fingerprint}
	if r.MV.AtLeast(mvKeypairType) {
		v.Type = kp.Type
	}
	return v
}

func (s *Service) ListKeypairs(w http.ResponseWriter, r *core.Request) error {
	user := keypairUser(r, "")
	if err := r.Authorize(policy.KeypairsIndex, core.Target(r.Ident.ProjectID, user)); err != nil {
		return err
	}
	q := r.URL.Query()
	limit, marker := core.MaxPage, ""
	if r.MV.AtLeast(mvKeypairPaging) {
		if l := q.Get("limit"); l != "" {
			n, err := strconv.Atoi(l)
			if err != nil || n < 0 {
				return core.BadRequest("Invalid input for query parameters limit. Value: %s. It must be a non-negative integer.", l)
			}
			limit = min(n, core.MaxPage)
		}
		marker = q.Get("marker")
		if marker != "" {
			if _, err := s.Cfg.Store.GetKeypair(r.Context(), user, marker); errors.Is(err, store.ErrNotFound) {
				return core.BadRequest("marker [%s] not found", marker)
			} else if err != nil {
				return fmt.Errorf("keypair marker: %w", err)
			}
		}
	}
	var kps []store.Keypair
	if limit > 0 {
		var err error
		if kps, err = s.Cfg.Store.ListKeypairs(r.Context(), user, marker, limit); err != nil {
			return fmt.Errorf("list keypairs: %w", err)
		}
	}
	out := make([]map[string]keypairView, 0, len(kps))
	for _, kp := range kps {
		out = append(out, map[string]keypairView{"keypair": s.keypairView(r, kp)})
	}
	body := struct {
		Keypairs []map[string]keypairView `json:"keypairs"`
		Links    []core.Link              `json:"keypairs_links,omitempty"`
	}{Keypairs: out}
	if r.MV.AtLeast(mvKeypairPaging) && limit > 0 && len(kps) == limit {
		next := url.Values{"limit": {strconv.Itoa(limit)}, "marker": {kps[len(kps)-1].Name}}
		if q.Has("user_id") {
			next.Set("user_id", q.Get("user_id"))
		}
		body.Links = []core.Link{{Rel: "next", Href: core.BaseURL(r.Request) + r.URL.Path + "?" + next.Encode()}}
	}
	core.WriteJSON(w, http.StatusOK, body)
	return nil
}

// keypairShown is GET /os-keypairs/{name}: Nova's row members besides the
// key (deleted ones always false and null), the type from 2.2.
type keypairShown struct {
	CreatedAt   string  `json:"created_at"`
	Deleted     bool    `json:"deleted"`
	DeletedAt   *string `json:"deleted_at"`
	Fingerprint string  `json:"fingerprint"`
	ID          int     `json:"id"`
	Name        string  `json:"name"`
	PublicKey   string  `json:"public_key"`
	Type        *string `json:"type,omitempty"`
	UpdatedAt   *string `json:"updated_at"`
	UserID      string  `json:"user_id"`
}

func (s *Service) ShowKeypair(w http.ResponseWriter, r *core.Request) error {
	user := keypairUser(r, "")
	if err := r.Authorize(policy.KeypairsShow, core.Target(r.Ident.ProjectID, user)); err != nil {
		return err
	}
	name := r.PathValue("name")
	kp, err := s.Cfg.Store.GetKeypair(r.Context(), user, name)
	if errors.Is(err, store.ErrNotFound) {
		return core.NotFound("Keypair %s not found for user %s", name, user)
	}
	if err != nil {
		return fmt.Errorf("get keypair: %w", err)
	}
	v := keypairShown{Name: kp.Name, PublicKey: kp.PublicKey, Fingerprint: kp.Fingerprint,
		UserID: kp.UserID, CreatedAt: kp.CreatedAt.UTC().Format(core.NovaUsecTime),
		// Nova's id is a row id; a stable number stands in for it.
		ID: int(crc32.ChecksumIEEE([]byte(kp.UserID+"/"+kp.Name)) & 0x7fffffff)}
	if r.MV.AtLeast(mvKeypairType) {
		v.Type = &kp.Type
	}
	core.WriteJSON(w, http.StatusOK, struct {
		Keypair keypairShown `json:"keypair"`
	}{v})
	return nil
}

func (s *Service) DeleteKeypair(w http.ResponseWriter, r *core.Request) error {
	user := keypairUser(r, "")
	if err := r.Authorize(policy.KeypairsDelete, core.Target(r.Ident.ProjectID, user)); err != nil {
		return err
	}
	name := r.PathValue("name")
	err := s.Cfg.Store.DeleteKeypair(r.Context(), user, name)
	if errors.Is(err, store.ErrNotFound) {
		return core.NotFound("Keypair %s not found for user %s", name, user)
	}
	if err != nil {
		return fmt.Errorf("delete keypair: %w", err)
	}
	if r.MV.AtLeast(mvKeypairType) {
		w.WriteHeader(http.StatusNoContent)
	} else {
		w.WriteHeader(http.StatusAccepted)
	}
	return nil
}

func (s *Service) CreateKeypair(w http.ResponseWriter, r *core.Request) error {
	top, err := core.ReadJSONObject(r.Request)
	if err != nil {
		return err
	}
	for k := range top {
		if k != "keypair" {
			return core.BadRequest("Invalid input for field/attribute %s: additional properties are not allowed.", k)
		}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(top["keypair"], &fields); err != nil || fields == nil {
		return core.BadRequest("Invalid input for field/attribute keypair. It must be an object with a name.")
	}
	allowed := map[string]bool{"name": true, "public_key": true, "type": r.MV.AtLeast(mvKeypairType), "user_id": r.MV.AtLeast(mvKeypairUser)}
	for k := range fields {
		if !allowed[k] {
			return core.BadRequest("Invalid input for field/attribute keypair. Additional properties are not allowed ('%s' was unexpected).", k)
		}
	}
	name, err := core.RequiredString(fields, "name", 255)
	if err != nil {
		return err
	}
	nameRE := keypairName20
	if r.MV.AtLeast(mvKeypairImportOnly) {
		nameRE = keypairName292
	}
	if !nameRE.MatchString(name) || core.CheckName("name", name) != nil {
		return core.BadRequest("Invalid input for field/attribute name. Value: %s. Keypair name contains unsafe characters; allowed are letters, digits, space, '_' and '-'%s.",
			name, map[bool]string{true: ", '@' and '.'"}[r.MV.AtLeast(mvKeypairImportOnly)])
	}
	typ, err := core.OptionalString(fields, "type", 255)
	if err != nil {
		return err
	}
	if typ == "" {
		typ = "ssh"
	}
	if typ != "ssh" && typ != "x509" {
		return core.BadRequest("Invalid input for field/attribute type. Value: %s. It is not one of ['ssh', 'x509'].", typ)
	}
	bodyUser, err := core.OptionalString(fields, "user_id", 255)
	if err != nil {
		return err
	}
	user := keypairUser(r, bodyUser)
	if err := r.Authorize(policy.KeypairsCreate, core.Target(r.Ident.ProjectID, user)); err != nil {
		return err
	}
	pub, err := core.OptionalString(fields, "public_key", 16384)
	if err != nil {
		return err
	}
	if _, present := fields["public_key"]; r.MV.AtLeast(mvKeypairImportOnly) && (!present || pub == "") {
		return core.BadRequest("Invalid input for field/attribute keypair. 'public_key' is a required property.")
	}
	kp := store.Keypair{UserID: user, Name: name, Type: typ, CreatedAt: s.Cfg.Clock.Now().UTC()}
	var private string
	switch {
	case pub != "" && typ == "ssh":
		key, err := parseSSHPublicKey(pub)
		if err != nil {
			return core.BadRequest("%v", err)
		}
		kp.PublicKey, kp.Fingerprint = pub, ssh.FingerprintLegacyMD5(key)
	case pub != "":
		if kp.Fingerprint, err = parseX509(pub); err != nil {
			return core.BadRequest("%v", err)
		}
		kp.PublicKey = pub
	case typ == "ssh":
		if kp.PublicKey, private, kp.Fingerprint, err = generateSSHKey(); err != nil {
			return err
		}
	default:
		if kp.PublicKey, private, kp.Fingerprint, err = generateX509(user, kp.CreatedAt); err != nil {
			return err
		}
	}
	limits, err := s.quotas.ProjectLimits(r, r.Ident.ProjectID)
	if err != nil {
		return err
	}
	err = s.Cfg.Store.CreateKeypair(r.Context(), kp, limits.Get(store.ResKeyPairs))
	var qe *store.QuotaExceededError
	switch {
	case errors.As(err, &qe):
		return core.Forbidden("Quota exceeded, too many key pairs.")
	case errors.Is(err, store.ErrExists):
		return core.Conflict("Key pair '%s' already exists.", name)
	case err != nil:
		return fmt.Errorf("create keypair: %w", err)
	}
	v := s.keypairView(r, kp)
	v.UserID, v.PrivateKey = kp.UserID, private
	status := http.StatusOK
	if r.MV.AtLeast(mvKeypairType) {
		status = http.StatusCreated
	}
	core.WriteJSON(w, status, map[string]keypairView{"keypair": v})
	return nil
}
