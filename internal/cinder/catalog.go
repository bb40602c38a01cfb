package cinder

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// lookup finds Cinder's endpoint in the catalog of token (GET
// /v3/auth/catalog): the first of the types block-storage and volumev3
// with an endpoint of iface (default public) in region (any when empty).
func lookup(ctx context.Context, hc *http.Client, identity, token, region, iface string) (string, error) {
	if iface == "" {
		iface = "public"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(identity, "/")+"/auth/catalog", nil)
	if err != nil {
		return "", fmt.Errorf("cinder: catalog: %w", err)
	}
	req.Header.Set("X-Auth-Token", token)
	resp, err := hc.Do(req)
	if err != nil {
		return "", &Error{Op: "catalog", Message: err.Error(), kind: ErrUnavailable, cause: err}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("cinder: catalog: %s %s", resp.Status, raw)
	}
	var cat struct {
		Catalog []struct {
			Type      string `json:"type"`
			Endpoints []struct {
				Interface string `json:"interface"`
				Region    string `json:"region_id"`
				URL       string `json:"url"`
			} `json:"endpoints"`
		} `json:"catalog"`
	}
	if err := json.Unmarshal(raw, &cat); err != nil {
		return "", fmt.Errorf("cinder: catalog: %w", err)
	}
	for _, typ := range []string{"block-storage", "volumev3"} {
		for _, s := range cat.Catalog {
			if s.Type != typ {
				continue
			}
			for _, ep := range s.Endpoints {
				if ep.Interface == iface && (region == "" || ep.Region == region) {
					return ep.URL, nil
				}
			}
		}
	}
	return "", fmt.Errorf("cinder: no block-storage or volumev3 %s endpoint in the catalog", iface)
}
