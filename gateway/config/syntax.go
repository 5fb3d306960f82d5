package config

import (
	"errors"
	"fmt"
	"io"
	"syscall"

	"github.com/skillgate/skillgate/internal/yamldoc"
)

// readAll reads a config file's bytes. A folder and text that is not
// UTF-8 are errors at the file, with what to do.
func readAll(r io.Reader, name string) ([]byte, error) {
	data, err := io.ReadAll(r)
	if errors.Is(err, syscall.EISDIR) {
		return nil, notAFile(name)
	}
	if err != nil {
		return nil, &Error{Pos: Pos{File: name}, Msg: fmt.Sprintf("cannot read the file: %v", err), Err: err}
	}
	if err := checkUTF8(data, name); err != nil {
		return nil, err
	}
	return data, nil
}

// checkUTF8 returns an error at the first byte of data that is not UTF-8.
func checkUTF8(data []byte, name string) error {
	if p, bad := yamldoc.UTF8(data); bad {
		return problemError(p, name)
	}
	return nil
}

func notAFile(name string) *Error {
	return &Error{Pos: Pos{File: name}, Msg: "is a directory, not a config file; give the path of a YAML file such as skillgate.yaml"}
}

// syntaxError turns err, a yaml.v3 error for data, into an *Error at the
// place of the problem with a hint.
func syntaxError(err error, data []byte, name string) *Error {
	p := yamldoc.Syntax(err, data)
	p.Msg = "invalid YAML: " + p.Msg
	return problemError(p, name)
}

// problemError is p, found in the file called name, as an *Error.
func problemError(p yamldoc.Problem, name string) *Error {
	return &Error{Pos: Pos{File: name, Line: p.Line, Col: p.Col}, Field: p.Field, Msg: p.Msg}
}
