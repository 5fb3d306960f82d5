package script

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// maxState bounds a tool's state file.
const maxState = 4 << 20

// stateFile is a tool's JSON state (state/get, state/set): one JSON object
// in state.json of its state dir, rewritten atomically on every set.
type stateFile struct {
	path string
	mu   sync.Mutex
}

func (s *stateFile) load() (map[string]json.RawMessage, error) {
	data, err := os.ReadFile(s.path)
	if os.IsNotExist(err) {
		return map[string]json.RawMessage{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read state: %w", err)
	}
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("state file %s is not a JSON object: %w", s.path, err)
	}
	return m, nil
}

// get returns the value of key (null when unset), or the whole state when
// key is nil.
func (s *stateFile) get(key *string) (json.RawMessage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.load()
	if err != nil {
		return nil, err
	}
	if key == nil {
		return json.Marshal(m)
	}
	if v, ok := m[*key]; ok {
		return v, nil
	}
	return json.RawMessage("null"), nil
}

// set stores value under key; a null or absent value deletes the key.
func (s *stateFile) set(key string, value json.RawMessage) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.load()
	if err != nil {
		return err
	}
	if len(value) == 0 || string(value) == "null" {
		delete(m, key)
	} else {
		m[key] = value
	}
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if len(data) > maxState {
		return fmt.Errorf("state would be %d bytes, more than the %d allowed; store less", len(data), maxState)
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), ".state-*.json")
	if err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write state: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	return os.Rename(tmp.Name(), s.path)
}
