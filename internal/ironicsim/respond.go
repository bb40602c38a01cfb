package ironicsim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"unicode/utf8"
)

// apiErr is an error answer. Ironic double-encodes its errors: the body is
// {"error_message": "<JSON string>"}, the inner JSON being
// {"faultcode", "faultstring", "debuginfo"} for errors raised by the API code,
// or {"code", "title", "description"} for routing-level errors (unknown
// resource, feature below the microversion, unsupported version).
type apiErr struct {
	status  int
	msg     string
	server  bool // faultcode "Server" (5xx) instead of "Client"
	routing bool
}

func (e *apiErr) Error() string { return e.msg }

func clientErr(status int, format string, args ...any) *apiErr {
	return &apiErr{status: status, msg: fmt.Sprintf(format, args...)}
}

func badRequest(format string, args ...any) *apiErr {
	return clientErr(http.StatusBadRequest, format, args...)
}

func conflict(format string, args ...any) *apiErr {
	return clientErr(http.StatusConflict, format, args...)
}

func serverErr(status int, format string, args ...any) *apiErr {
	return &apiErr{status: status, msg: fmt.Sprintf(format, args...), server: true}
}

func routingErr(status int, description string) *apiErr {
	return &apiErr{status: status, msg: description, routing: true}
}

// Ironic's exception texts used in several places.
func errNodeNotFound(ident string) *apiErr {
	return clientErr(http.StatusNotFound, "Node %s could not be found.", ident)
}

func errNodeLocked(uuid, host string) *apiErr {
	return conflict("Node %s is locked by host %s, please retry after the current operation is completed.", uuid, host)
}

func errNodeAssociated(uuid, instance string) *apiErr {
	return conflict("Node %s is associated with instance %s.", uuid, instance)
}

func errInvalidStateRequested(action, node, state string) *apiErr {
	return badRequest(`The requested action "%s" can not be performed on node "%s" while it is in state "%s".`,
		action, node, state)
}

func errNotAcceptable() *apiErr {
	return clientErr(http.StatusNotAcceptable, "Request not acceptable.")
}

var statusTitles = map[int]string{
	400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 406: "Not Acceptable",
	409: "Conflict", 500: "Internal Server Error", 503: "Service Unavailable",
}

// body renders the double-encoded error body exactly as Python's json.dumps
// would (", " and ": " separators, ASCII only).
func (e *apiErr) body() []byte {
	var inner string
	if e.routing {
		inner = `{"code": ` + strconv.Itoa(e.status) + `, "title": ` + pyQuote(statusTitles[e.status]) +
			`, "description": ` + pyQuote(e.msg) + `}`
	} else {
		code := "Client"
		if e.server {
			code = "Server"
		}
		inner = `{"faultcode": ` + pyQuote(code) + `, "faultstring": ` + pyQuote(e.msg) + `, "debuginfo": null}`
	}
	return []byte(`{"error_message": ` + pyQuote(inner) + `}`)
}

func writeErr(w http.ResponseWriter, e *apiErr) {
	b := e.body()
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(e.status)
	_, _ = w.Write(b)
}

// writeJSON answers with v encoded as JSON (no HTML escaping, like Python).
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		writeErr(w, serverErr(500, "%s", err.Error()))
		return
	}
	b := bytes.TrimRight(buf.Bytes(), "\n")
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeEmpty answers 202 or 204 with no body.
func writeEmpty(w http.ResponseWriter, status int) {
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(status)
}

// pyQuote quotes s as Python's json.dumps does with ensure_ascii=True.
func pyQuote(s string) string {
	const hexd = "0123456789abcdef"
	b := make([]byte, 0, len(s)+2)
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '"':
				b = append(b, '\\', '"')
			case '\\':
				b = append(b, '\\', '\\')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				if c < 0x20 {
					b = append(b, '\\', 'u', '0', '0', hexd[c>>4], hexd[c&15])
				} else {
					b = append(b, c)
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r >= 0x10000 {
			r -= 0x10000
			hi, lo := 0xd800+(r>>10), 0xdc00+(r&0x3ff)
			b = append(b, '\\', 'u', hexd[hi>>12&15], hexd[hi>>8&15], hexd[hi>>4&15], hexd[hi&15])
			b = append(b, '\\', 'u', hexd[lo>>12&15], hexd[lo>>8&15], hexd[lo>>4&15], hexd[lo&15])
			continue
		}
		b = append(b, '\\', 'u', hexd[r>>12&15], hexd[r>>8&15], hexd[r>>4&15], hexd[r&15])
	}
	return string(append(b, '"'))
}

// pyRepr renders a JSON value as Python's repr() would (used where Ironic
// puts a patch operation into an error text).
func pyRepr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case string:
		return "'" + x + "'"
	case int:
		return strconv.Itoa(x)
	case float64:
		if x == float64(int64(x)) {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case json.Number:
		return x.String()
	case []any:
		out := "["
		for i, e := range x {
			if i > 0 {
				out += ", "
			}
			out += pyRepr(e)
		}
		return out + "]"
	case map[string]any:
		out := "{"
		i := 0
		for _, k := range sortedKeys(x) {
			if i > 0 {
				out += ", "
			}
			out += "'" + k + "': " + pyRepr(x[k])
			i++
		}
		return out + "}"
	}
	return fmt.Sprint(v)
}
