package servers

import (
	"encoding/base64"
	"encoding/json"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/lifecycle"
)

// parsePersonality reads a personality member (create and rebuild below
// 2.57) as Nova's schema does — an array of {path, contents}, contents
// base64 — and checks it against project's injected-file quotas as Nova's
// compute API does (_check_injected_file_quota: the count first, then the
// longest path and the longest contents, both as sent): over a limit is
// Nova's 403.
func (s *Service) parsePersonality(r *core.Request, project string, raw json.RawMessage) ([]lifecycle.File, error) {
	var items []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, core.BadRequest("Invalid input for field/attribute personality. Value: %s. It is not of type 'array'.", raw)
	}
	files := make([]lifecycle.File, 0, len(items))
	maxPath, maxContent := 0, 0
	for i, it := range items {
		if it == nil {
			return nil, core.BadRequest("Invalid input for field/attribute personality[%d]. It is not of type 'object'.", i)
		}
		var f lifecycle.File
		for k, v := range it {
			switch k {
			case "path":
				if json.Unmarshal(v, &f.Path) != nil {
					return nil, core.BadRequest("Invalid input for field/attribute path. Value: %s. It is not of type 'string'.", v)
				}
			case "contents":
				if json.Unmarshal(v, &f.Contents) != nil {
					return nil, core.BadRequest("Invalid input for field/attribute contents. Value: %s. It is not of type 'string'.", v)
				}
				if _, err := base64.StdEncoding.DecodeString(f.Contents); err != nil {
					return nil, core.BadRequest("Invalid input for field/attribute contents. Value: %s. It is not a 'base64'.", f.Contents)
				}
			default:
				return nil, core.BadRequest("Invalid input for field/attribute personality. Additional properties are not allowed ('%s' was unexpected).", k)
			}
		}
		maxPath, maxContent = max(maxPath, len(f.Path)), max(maxContent, len(f.Contents))
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil, nil
	}
	nFiles, contentBytes, pathBytes, err := s.quotas.PersonalityLimits(r, project)
	if err != nil {
		return nil, err
	}
	switch {
	case nFiles >= 0 && len(files) > nFiles:
		return nil, core.Forbidden("Personality file limit exceeded")
	case pathBytes >= 0 && maxPath > pathBytes:
		return nil, core.Forbidden("Personality file path exceeds maximum %d", pathBytes)
	case contentBytes >= 0 && maxContent > contentBytes:
		return nil, core.Forbidden("Personality file content exceeds maximum %d", contentBytes)
	}
	return files, nil
}
