package disclosure

import "unicode/utf8"

// EstimateTokens estimates how many tokens a language model's tokenizer
// makes of b, without a vocabulary. The rule, documented in README's
// disclosure section:
//
//   - a run of ASCII letters and digits counts one token per 5 bytes,
//     rounded up ("name" is 1, "description" is 3);
//   - a run of other non-space ASCII bytes (JSON punctuation) counts one
//     token per 2 bytes, rounded up (`":"` is 2, `{` is 1);
//   - whitespace counts nothing;
//   - every non-ASCII character counts one token.
//
// BPE tokenizers (cl100k, o200k, Claude's) merge common words and JSON
// punctuation into single tokens and split rare identifiers, so this is an
// estimate for comparing list sizes, not for billing.
func EstimateTokens(b []byte) int {
	n, word, punct := 0, 0, 0
	flush := func() {
		n += (word+4)/5 + (punct+1)/2
		word, punct = 0, 0
	}
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c >= utf8.RuneSelf:
			flush()
			_, size := utf8.DecodeRune(b[i:])
			n++
			i += size
			continue
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9':
			if punct > 0 {
				flush()
			}
			word++
		case c == ' ' || c == '\n' || c == '\t' || c == '\r':
			flush()
		default:
			if word > 0 {
				flush()
			}
			punct++
		}
		i++
	}
	flush()
	return n
}
