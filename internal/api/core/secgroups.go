package core

import (
	"context"
	"errors"
	"net/http"

	"github.com/ingot-dev/ingot/internal/neutron"
)

// SecurityGroups is Neutron called with the caller's own token
// (network.backend neutron), as Nova's security group proxy and its
// add/removeSecurityGroup actions call it: Neutron's policy decides.
type SecurityGroups interface {
	ListSecurityGroups(ctx context.Context, projectID string) ([]neutron.SecurityGroup, error)
	GetSecurityGroup(ctx context.Context, id string) (neutron.SecurityGroup, error)
	CreateSecurityGroup(ctx context.Context, name, description string) (neutron.SecurityGroup, error)
	UpdateSecurityGroup(ctx context.Context, id, name, description string) (neutron.SecurityGroup, error)
	DeleteSecurityGroup(ctx context.Context, id string) error
	CreateSecurityGroupRule(ctx context.Context, rule neutron.SecurityGroupRule) (neutron.SecurityGroupRule, error)
	GetSecurityGroupRule(ctx context.Context, id string) (neutron.SecurityGroupRule, error)
	DeleteSecurityGroupRule(ctx context.Context, id string) error
	ListPorts(ctx context.Context, f neutron.PortFilter) ([]neutron.Port, error)
	SetPortSecurityGroups(ctx context.Context, portID string, groups []string) (neutron.Port, error)
}

// NeutronError answers what Neutron refused, in Nova's proxy's terms:
// notFound for a missing group or rule, 400 with Neutron's words for what
// it found invalid or in use, 403 for its policy or a quota, 503 while it is
// away; anything else is a 500 with Neutron's words logged.
func NeutronError(err, notFound error) error {
	var ne *neutron.Error
	msg := ""
	if errors.As(err, &ne) {
		msg = ne.Message
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, neutron.ErrSecurityGroupNotFound), errors.Is(err, neutron.ErrNotFound),
		errors.Is(err, neutron.ErrPortNotFound):
		return notFound
	case errors.Is(err, neutron.ErrBadRequest), errors.Is(err, neutron.ErrConflict), errors.Is(err, neutron.ErrPortInUse):
		if msg == "" {
			msg = "The network service refused the request."
		}
		return BadRequest("%s", msg)
	case errors.Is(err, neutron.ErrForbidden):
		if msg == "" {
			msg = "The network service refused the request."
		}
		return &APIError{Status: http.StatusForbidden, Message: msg}
	case errors.Is(err, neutron.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		return Unavailable("The network service is unavailable; try again later.")
	}
	return err
}
