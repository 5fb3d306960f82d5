package frontend

import (
	"encoding/json"
	"strings"

	"github.com/skillgate/skillgate/internal/jsonscan"
)

// mcp-go sends a resources/read to a resource template only when the
// template's regular expression matches the URI, and no RFC 6570
// expression matches a raw space or the other characters a URI may not
// hold (oddURI). Sources take such URIs all the same (a skill file named
// "my file.md"), so the front end hands mcp-go such a read under a stand-in
// URI its catch-all matches, and resourceHandler reads the URI the client
// sent.

// standInRead returns the resources/read msg with its params.uri replaced
// by standIn when mcp-go's catch-all cannot match it; else msg as it is,
// and standIn "". uri is the URI replaced.
func (s *Server) standInRead(msg []byte) (out []byte, uri, standIn string) {
	if !json.Valid(msg) {
		return msg, "", ""
	}
	start, end := -1, -1
	jsonscan.Members(msg, func(key, params []byte, pStart, _ int) {
		if string(key) != "params" {
			return
		}
		start, end = -1, -1 // the last "params" counts, as for a decoder
		jsonscan.Members(params, func(key, value []byte, vStart, vEnd int) {
			if string(key) == "uri" && json.Unmarshal(value, &uri) == nil {
				start, end = pStart+vStart, pStart+vEnd
			}
		})
	})
	if start < 0 || !oddURI(uri) {
		return msg, "", ""
	}
	standIn = s.oddReads.put(json.RawMessage(uri))
	tok, _ := json.Marshal(standIn)
	out = make([]byte, 0, len(msg)-(end-start)+len(tok))
	return append(append(append(out, msg[:start]...), tok...), msg[end:]...), uri, standIn
}

// oddReadURI returns the URI a stand-in (standInRead) stands for.
func (s *Server) oddReadURI(standIn string) (string, bool) {
	if !strings.HasPrefix(standIn, s.oddReads.prefix) {
		return "", false
	}
	uri, ok := s.oddReads.take(standIn)
	return string(uri), ok
}
