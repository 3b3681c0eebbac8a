// A small `helm template` for this chart's tests where no helm binary is available: Go's own
// text/template with the sprig functions (Debian's golang-github-masterminds-sprig-dev) plus the
// ones Helm adds (include, tpl, required, fail, toYaml, fromYaml, fromJson, fromJsonArray), values
// merged the way Helm merges them (-f files, --set, --set-string), numbers as float64 as in Helm.
// Not Helm: no lint, no schema check (the jest tests check values.schema.json themselves), no
// hooks ordering, no lookup. Usage (a subset of helm's):
//
//	render template <release> <chart> [--namespace ns] [-f values.yaml]... [--set a.b=c]...
//	       [--set-string a.b=c]... [--show-only templates/x.yaml]
//
// Unlike helm template, `--show-only templates/NOTES.txt` prints the rendered install notes (what
// helm install shows afterwards), as plain text.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"gopkg.in/yaml.v3"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "Error: %v\n", err)
		os.Exit(1)
	}
}

type setArg struct {
	expr   string
	string bool
}

func run(args []string) error {
	if len(args) < 3 || args[0] != "template" {
		return errors.New("usage: render template <release> <chart> [--namespace ns] [-f file]... [--set k=v]... [--set-string k=v]... [--show-only path]")
	}
	release, chartDir := args[1], args[2]
	namespace, showOnly := "default", ""
	var files []string
	var sets []setArg
	for i := 3; i < len(args); i++ {
		next := func() string {
			i++
			if i >= len(args) {
				return ""
			}
			return args[i]
		}
		switch args[i] {
		case "--namespace", "-n":
			namespace = next()
		case "-f", "--values":
			files = append(files, next())
		case "--set":
			sets = append(sets, setArg{next(), false})
		case "--set-string":
			sets = append(sets, setArg{next(), true})
		case "--show-only", "-s":
			showOnly = next()
		default:
			return fmt.Errorf("unsupported argument %q", args[i])
		}
	}
	if !filepath.IsAbs(chartDir) {
		wd, _ := os.Getwd()
		chartDir = filepath.Join(wd, chartDir)
	}
	chartMeta := map[string]interface{}{}
	if err := readYaml(filepath.Join(chartDir, "Chart.yaml"), &chartMeta); err != nil {
		return err
	}
	values := map[string]interface{}{}
	if err := readYaml(filepath.Join(chartDir, "values.yaml"), &values); err != nil {
		return err
	}
	for _, f := range files {
		over := map[string]interface{}{}
		if err := readYaml(f, &over); err != nil {
			return err
		}
		values = merge(values, over)
	}
	// As Helm: the --set values form a map of their own, merged over the files' (a list set
	// by index or as {a,b} replaces the whole list).
	setValues := map[string]interface{}{}
	for _, s := range sets {
		if err := applySet(setValues, s); err != nil {
			return err
		}
	}
	values = merge(values, setValues)
	values = jsonRoundTrip(values).(map[string]interface{})

	name := filepath.Base(chartDir)
	base := name + "/templates"
	chart := map[string]interface{}{}
	for k, v := range chartMeta {
		chart[strings.ToUpper(k[:1])+k[1:]] = v
	}
	top := map[string]interface{}{
		"Values":       values,
		"Chart":        chart,
		"Release":      map[string]interface{}{"Name": release, "Namespace": namespace, "Service": "Helm", "IsInstall": true, "IsUpgrade": false, "Revision": 1},
		"Capabilities": map[string]interface{}{"KubeVersion": map[string]interface{}{"Version": "v1.30.0", "Major": "1", "Minor": "30"}},
	}

	entries, err := os.ReadDir(filepath.Join(chartDir, "templates"))
	if err != nil {
		return err
	}
	root := template.New("root").Option("missingkey=zero")
	funcs := funcMap(root)
	root.Funcs(funcs)
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		path := base + "/" + e.Name()
		text, err := os.ReadFile(filepath.Join(chartDir, "templates", e.Name()))
		if err != nil {
			return err
		}
		if _, err := root.New(path).Parse(string(text)); err != nil {
			return err
		}
		names = append(names, path)
	}
	sort.Strings(names)
	var out bytes.Buffer
	for _, path := range names {
		file := filepath.Base(path)
		rel := strings.TrimPrefix(path, name+"/")
		notes := file == "NOTES.txt" && rel == showOnly
		if !notes && (strings.HasPrefix(file, "_") || file == "NOTES.txt" || (!strings.HasSuffix(file, ".yaml") && !strings.HasSuffix(file, ".yml"))) {
			continue
		}
		if showOnly != "" && rel != showOnly {
			continue
		}
		data := copyTop(top, path, base)
		var buf bytes.Buffer
		if err := root.ExecuteTemplate(&buf, path, data); err != nil {
			return cleanErr(err)
		}
		text := strings.ReplaceAll(buf.String(), "<no value>", "")
		if notes {
			out.WriteString(text)
			continue
		}
		if strings.TrimSpace(text) == "" {
			continue
		}
		fmt.Fprintf(&out, "---\n# Source: %s\n%s\n", path, strings.TrimSpace(text))
	}
	_, err = os.Stdout.Write(out.Bytes())
	return err
}

func copyTop(top map[string]interface{}, path, base string) map[string]interface{} {
	d := map[string]interface{}{}
	for k, v := range top {
		d[k] = v
	}
	d["Template"] = map[string]interface{}{"Name": path, "BasePath": base}
	return d
}

// Helm reports a template's fail/required as "execution error at (...): <message>".
var execErr = regexp.MustCompile(`^template: ([^:]+:\d+:\d+): executing "[^"]*" at <[^>]*>: error calling (?:fail|required): `)

func cleanErr(err error) error {
	msg := err.Error()
	if m := execErr.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("execution error at (%s): %s", m[1], msg[len(m[0]):])
	}
	return err
}

func funcMap(root *template.Template) template.FuncMap {
	f := sprig.TxtFuncMap()
	delete(f, "env")
	delete(f, "expandenv")
	includes := 0
	f["include"] = func(name string, data interface{}) (string, error) {
		includes++
		defer func() { includes-- }()
		if includes > 1000 {
			return "", errors.New("include: recursion too deep")
		}
		var buf bytes.Buffer
		if err := root.ExecuteTemplate(&buf, name, data); err != nil {
			return "", err
		}
		return strings.ReplaceAll(buf.String(), "<no value>", ""), nil
	}
	f["tpl"] = func(text string, data interface{}) (string, error) {
		t, err := root.Clone()
		if err != nil {
			return "", err
		}
		t, err = t.New("tpl").Parse(text)
		if err != nil {
			return "", err
		}
		var buf bytes.Buffer
		if err := t.Execute(&buf, data); err != nil {
			return "", err
		}
		return strings.ReplaceAll(buf.String(), "<no value>", ""), nil
	}
	f["required"] = func(msg string, v interface{}) (interface{}, error) {
		if v == nil {
			return v, errors.New(msg)
		}
		if s, ok := v.(string); ok && s == "" {
			return v, errors.New(msg)
		}
		return v, nil
	}
	f["fail"] = func(msg string) (string, error) { return "", errors.New(msg) }
	f["toYaml"] = func(v interface{}) string {
		var buf bytes.Buffer
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		if err := enc.Encode(jsonRoundTrip(v)); err != nil {
			return ""
		}
		return strings.TrimSuffix(buf.String(), "\n")
	}
	f["fromYaml"] = func(s string) map[string]interface{} {
		m := map[string]interface{}{}
		if err := yaml.Unmarshal([]byte(s), &m); err != nil {
			m["Error"] = err.Error()
		}
		return m
	}
	f["toJson"] = func(v interface{}) string {
		b, err := json.Marshal(v)
		if err != nil {
			return ""
		}
		return string(b)
	}
	f["fromJson"] = func(s string) map[string]interface{} {
		m := map[string]interface{}{}
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			m["Error"] = err.Error()
		}
		return m
	}
	f["fromJsonArray"] = func(s string) []interface{} {
		var a []interface{}
		if err := json.Unmarshal([]byte(s), &a); err != nil {
			return []interface{}{err.Error()}
		}
		return a
	}
	f["lookup"] = func(...interface{}) map[string]interface{} { return map[string]interface{}{} }
	return f
}

func readYaml(path string, into *map[string]interface{}) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(b, into); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if *into == nil {
		*into = map[string]interface{}{}
	}
	return nil
}

// jsonRoundTrip gives values the types Helm's do (numbers float64, maps map[string]interface{}).
func jsonRoundTrip(v interface{}) interface{} {
	b, err := json.Marshal(normalize(v))
	if err != nil {
		return v
	}
	var out interface{}
	_ = json.Unmarshal(b, &out)
	return out
}

func normalize(v interface{}) interface{} {
	switch t := v.(type) {
	case map[interface{}]interface{}:
		m := map[string]interface{}{}
		for k, x := range t {
			m[fmt.Sprint(k)] = normalize(x)
		}
		return m
	case map[string]interface{}:
		m := map[string]interface{}{}
		for k, x := range t {
			m[k] = normalize(x)
		}
		return m
	case []interface{}:
		a := make([]interface{}, len(t))
		for i, x := range t {
			a[i] = normalize(x)
		}
		return a
	}
	return v
}

// merge is Helm's coalescing of user values over defaults: maps merge, a null deletes, the rest replaces.
func merge(base, over map[string]interface{}) map[string]interface{} {
	out := map[string]interface{}{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		if v == nil {
			delete(out, k)
			continue
		}
		bm, ok1 := out[k].(map[string]interface{})
		om, ok2 := v.(map[string]interface{})
		if ok1 && ok2 {
			out[k] = merge(bm, om)
		} else {
			out[k] = v
		}
	}
	return out
}

// applySet handles `a.b.c=value` (with `\,` and `\.` escapes; several pairs split by commas),
// list elements by index (`a.hosts[0].host=x`) and whole lists (`a.cidrs={x,y}`), as Helm's strvals.
func applySet(values map[string]interface{}, s setArg) error {
	for _, pair := range splitPairs(s.expr) {
		eq := strings.Index(pair, "=")
		if eq < 0 {
			return fmt.Errorf("--set %q: no '='", pair)
		}
		raw := pair[eq+1:]
		var val interface{}
		if strings.HasPrefix(raw, "{") && strings.HasSuffix(raw, "}") {
			items := []interface{}{}
			if inner := raw[1 : len(raw)-1]; inner != "" {
				for _, it := range splitUnescaped(inner, ',') {
					items = append(items, scalar(strings.ReplaceAll(it, `\,`, ","), s.string))
				}
			}
			val = items
		} else {
			val = scalar(strings.ReplaceAll(raw, `\,`, ","), s.string)
		}
		if err := setPath(values, splitUnescaped(pair[:eq], '.'), val); err != nil {
			return fmt.Errorf("--set %q: %w", pair, err)
		}
	}
	return nil
}

// scalar types a --set value as Helm does (booleans, null, integers); --set-string keeps text.
func scalar(raw string, asString bool) interface{} {
	if asString {
		return raw
	}
	switch {
	case raw == "true" || raw == "false":
		return raw == "true"
	case raw == "null":
		return nil
	}
	if n, err := strconv.ParseInt(raw, 10, 64); err == nil {
		return n
	}
	return raw
}

var indexedKey = regexp.MustCompile(`^(.+)\[([0-9]+)\]$`)

// setPath sets val at keys, each a map key or `name[i]`, a list element (the list grows as needed).
func setPath(root map[string]interface{}, keys []string, val interface{}) error {
	m := root
	for i, raw := range keys {
		k := strings.ReplaceAll(raw, `\.`, ".")
		last := i == len(keys)-1
		if g := indexedKey.FindStringSubmatch(k); g != nil {
			idx, err := strconv.Atoi(g[2])
			if err != nil || idx > 1000 {
				return fmt.Errorf("bad index in %q", k)
			}
			list, _ := m[g[1]].([]interface{})
			for len(list) <= idx {
				list = append(list, nil)
			}
			m[g[1]] = list
			if last {
				list[idx] = val
				return nil
			}
			next, ok := list[idx].(map[string]interface{})
			if !ok {
				next = map[string]interface{}{}
				list[idx] = next
			}
			m = next
			continue
		}
		if last {
			m[k] = val
			return nil
		}
		next, ok := m[k].(map[string]interface{})
		if !ok {
			next = map[string]interface{}{}
			m[k] = next
		}
		m = next
	}
	return nil
}

// splitPairs splits a --set expression at the commas outside {...} lists (unescaped).
func splitPairs(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

func splitUnescaped(s string, sep byte) []string {
	var parts []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if s[i] == sep {
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}
