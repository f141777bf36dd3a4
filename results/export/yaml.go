package export

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// kv is one key of an ordered YAML mapping; its value is a scalar (string, int, float64, bool),
// a nested mapping ([]kv), a list of strings ([]string) or a list of mappings ([][]kv).
type kv struct {
	key   string
	value any
}

// writeYAML writes m as block YAML indented by indent spaces, keys in the given order, so that
// the files read as written and diff line by line.
func writeYAML(b *bytes.Buffer, m []kv, indent int) {
	pad := strings.Repeat(" ", indent)
	for _, e := range m {
		switch v := e.value.(type) {
		case []kv:
			fmt.Fprintf(b, "%s%s:\n", pad, e.key)
			writeYAML(b, v, indent+2)
		case []string:
			fmt.Fprintf(b, "%s%s:\n", pad, e.key)
			for _, s := range v {
				fmt.Fprintf(b, "%s  - %s\n", pad, yamlScalar(s))
			}
		case [][]kv:
			fmt.Fprintf(b, "%s%s:\n", pad, e.key)
			for _, item := range v {
				var sub bytes.Buffer
				writeYAML(&sub, item, indent+4)
				lines := strings.SplitAfter(sub.String(), "\n")
				// The first key goes on the dash's line.
				fmt.Fprintf(b, "%s  - %s", pad, strings.TrimLeft(lines[0], " "))
				for _, l := range lines[1:] {
					b.WriteString(l)
				}
			}
		default:
			fmt.Fprintf(b, "%s%s: %s\n", pad, e.key, yamlValue(v))
		}
	}
}

// yamlValue formats a scalar.
func yamlValue(v any) string {
	switch v := v.(type) {
	case string:
		return yamlScalar(v)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// yamlScalar quotes a string when YAML would read it as something else (a number, a boolean,
// null) or when it holds characters with a meaning in YAML.
func yamlScalar(s string) string {
	if s == "" {
		return `""`
	}
	plain := !strings.ContainsAny(s[:1], "?:,[]{}#&*!|>'\"%@`") && !strings.HasPrefix(s, "- ") && s != "-" &&
		!strings.Contains(s, ": ") && !strings.Contains(s, " #") && !strings.HasSuffix(s, ":") && s == strings.TrimSpace(s)
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		plain = false
	}
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off", "null", "~":
		plain = false
	}
	if plain {
		return s
	}
	return strconv.Quote(s)
}
