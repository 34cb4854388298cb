package yamlstrict

import "testing"

func TestProblemFormat(t *testing.T) {
	t.Parallel()
	full := Problem{Line: 4, Column: 7, Path: "feeds[0].url", What: "is required", Fix: "add url:"}
	tests := []struct {
		name string
		p    Problem
		file string
		want string
	}{
		{"everything", full, "feeds.yaml", "feeds.yaml:4:7: feeds[0].url: is required; add url:"},
		{"no file", full, "", "4:7: feeds[0].url: is required; add url:"},
		{"no column", Problem{Line: 4, Path: "x", What: "bad", Fix: "fix"}, "f", "f:4: x: bad; fix"},
		{"no position", Problem{Path: "x", What: "bad", Fix: "fix"}, "f", "f: x: bad; fix"},
		{"no path", Problem{Line: 1, Column: 1, What: "the file is empty", Fix: "add a list"}, "f", "f:1:1: the file is empty; add a list"},
		{"no fix", Problem{Line: 2, Column: 3, Path: "x", What: "bad"}, "f", "f:2:3: x: bad"},
		{"only a message", Problem{What: "bad"}, "", "bad"},
	}
	for _, tc := range tests {
		if got := tc.p.Format(tc.file); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestErrorOneLinePerProblem(t *testing.T) {
	t.Parallel()
	err := &Error{File: "r.yaml", Problems: []Problem{
		{Line: 1, Column: 1, Path: "a", What: "bad", Fix: "fix a"},
		{Line: 2, Column: 3, Path: "b", What: "worse", Fix: "fix b"},
	}}
	if got, want := err.Error(), "r.yaml:1:1: a: bad; fix a\nr.yaml:2:3: b: worse; fix b"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

func TestPaths(t *testing.T) {
	t.Parallel()
	if got := Join("", "feeds"); got != "feeds" {
		t.Errorf("Join top = %q", got)
	}
	if got := Join(Index("feeds", 2), "url"); got != "feeds[2].url" {
		t.Errorf("Join nested = %q", got)
	}
}
