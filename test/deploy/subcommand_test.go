package deploy

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// subcommands returns the string literals a main package compares its
// arguments with: case labels of switch statements and operands of ==.
// For cmd/producer that is serve, send and healthcheck.
func subcommands(t *testing.T, dir string) []string {
	t.Helper()
	file := filepath.Join(repoRoot(t), dir, "main.go")
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	add := func(e ast.Expr) {
		if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if s, err := strconv.Unquote(lit.Value); err == nil {
				out = append(out, s)
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CaseClause:
			for _, e := range n.List {
				add(e)
			}
		case *ast.BinaryExpr:
			if n.Op == token.EQL {
				add(n.X)
				add(n.Y)
			}
		}
		return true
	})
	return out
}

func TestHealthcheckArgvMatchesTheBinaries(t *testing.T) {
	t.Parallel()
	p := loadProject(t, loadOpts{dotEnv: exampleEnv(t)})
	for _, svc := range []string{svcProducer, svcWorker} {
		argv := service(t, p, svc).HealthCheck.Test
		if len(argv) != 3 || argv[0] != "CMD" {
			t.Errorf("%s health check = %q, want [CMD <binary> <subcommand>]", svc, argv)
			continue
		}
		bin := path.Base(argv[1])
		cmdDir := filepath.Join("cmd", bin)
		accepted := subcommands(t, cmdDir)
		if !slices.Contains(accepted, argv[2]) {
			t.Errorf("%s health check runs `%s %s`, but %s only knows %q", svc, bin, argv[2], cmdDir, accepted)
		}
		if bin != svc {
			t.Errorf("%s health check probes the %s binary", svc, bin)
		}
	}
}
