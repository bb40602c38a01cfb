package core

import (
	"github.com/ingot-dev/ingot/internal/policy"
)

// IsAdmin is Nova's context.is_admin: it passes locks.
func (r *Request) IsAdmin() bool { return r.Can(policy.ContextIsAdmin, r.Own()) }
