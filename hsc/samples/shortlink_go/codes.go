package main

import (
	"crypto/rand"
	"errors"
	"math"
	"math/big"
	"strings"
)

// base62Alphabet orders digits first, then upper case, then lower case,
// so encoded numbers sort in the same order as their values when their
// lengths are equal.
const base62Alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// ambiguousRunes are left out of random codes because they are easy to
// misread when a link is copied by hand.
const ambiguousRunes = "0O1lI"

var (
	// ErrInvalidCode is returned when a code contains characters outside
	// the alphabet or has an unsupported length.
	ErrInvalidCode = errors.New("invalid short code")

	reservedCodes = map[string]bool{
		"api": true, "admin": true, "health": true, "stats": true, "login": true,
	}
)

// EncodeBase62 converts a non-negative integer into its base62 string.
// Zero encodes as "0". Sequential IDs encoded this way make short, dense
// codes.
func EncodeBase62(n uint64) string {
	if n == 0 {
		return "0"
	}
	var buf [11]byte
	i := len(buf)
	for n > 0 {
		i--
		buf[i] = base62Alphabet[n%62]
		n /= 62
	}
	return string(buf[i:])
}

// DecodeBase62 converts a base62 string back into an integer. It rejects
// empty strings, unknown characters, and values too large for uint64.
func DecodeBase62(s string) (uint64, error) {
	if s == "" || len(s) > 11 {
		return 0, ErrInvalidCode
	}
	var n uint64
	for _, r := range s {
		idx := strings.IndexRune(base62Alphabet, r)
		if idx < 0 {
			return 0, ErrInvalidCode
		}
		if n > (math.MaxUint64-uint64(idx))/62 {
			return 0, ErrInvalidCode
		}
		n = n*62 + uint64(idx)
	}
	return n, nil
}

// CodeGenerator produces random short codes from an alphabet that excludes
// easily confused characters.
type CodeGenerator struct {
	length   int
	alphabet string
}

// NewCodeGenerator builds a generator for codes of the given length.
func NewCodeGenerator(length int) *CodeGenerator {
	var b strings.Builder
	for _, r := range base62Alphabet {
		if !strings.ContainsRune(ambiguousRunes, r) {
			b.WriteRune(r)
		}
	}
	return &CodeGenerator{length: length, alphabet: b.String()}
}

// Generate returns a new random code using a cryptographically secure
// source, so codes cannot be predicted from earlier ones.
func (g *CodeGenerator) Generate() (string, error) {
	limit := big.NewInt(int64(len(g.alphabet)))
	out := make([]byte, g.length)
	for i := range out {
		n, err := rand.Int(rand.Reader, limit)
		if err != nil {
			return "", err
		}
		out[i] = g.alphabet[n.Int64()]
	}
	return string(out), nil
}

// GenerateUnique keeps drawing codes until one is neither reserved nor
// already taken according to the exists callback, giving up after a fixed
// number of attempts so a nearly full code space cannot hang a request.
func (g *CodeGenerator) GenerateUnique(exists func(string) bool) (string, error) {
	const maxAttempts = 8
	for attempt := 0; attempt < maxAttempts; attempt++ {
		code, err := g.Generate()
		if err != nil {
			return "", err
		}
		if IsReserved(code) || exists(code) {
			continue
		}
		return code, nil
	}
	return "", errors.New("could not find a free short code; try a longer code length")
}

// ValidateCustomCode checks a code requested by a user: 3 to 32
// characters from the base62 alphabet plus dash and underscore, and not
// one of the reserved path names.
func ValidateCustomCode(code string) error {
	if len(code) < 3 || len(code) > 32 {
		return ErrInvalidCode
	}
	for _, r := range code {
		if r == '-' || r == '_' {
			continue
		}
		if !strings.ContainsRune(base62Alphabet, r) {
			return ErrInvalidCode
		}
	}
	if IsReserved(code) {
		return errors.New("that code is reserved")
	}
	return nil
}

// IsReserved reports whether a code collides with a route the service
// itself uses, compared case-insensitively.
func IsReserved(code string) bool {
	return reservedCodes[strings.ToLower(code)]
}
