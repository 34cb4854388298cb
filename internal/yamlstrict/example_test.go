package yamlstrict_test

import (
	"fmt"

	"github.com/herald-dev/herald/internal/yamlstrict"
)

// A caller walks the tree by hand: every accessor checks one node and
// records what is wrong, so one pass reports every mistake of the file.
func Example() {
	data := []byte(`
servers:
  - host: db1.example.org
    prot: 5432
  - host: db2.example.org
    port: fast
    host: db3.example.org
`)
	var w yamlstrict.Walker
	root := w.Document(data, "add a servers: list")
	top := w.Mapping(root, "", []string{"servers"})
	servers := top["servers"]
	for i, item := range w.List(servers.Value, servers.Path) {
		m := w.Mapping(item, yamlstrict.Index(servers.Path, i), []string{"host", "port"})
		host, _ := w.String(m["host"].Value, m["host"].Path)
		port, _ := w.Int(m["port"].Value, m["port"].Path)
		fmt.Printf("%s:%d\n", host, port)
	}
	if err := w.Err("servers.yaml"); err != nil {
		fmt.Println(err)
	}
	// Output:
	// db1.example.org:0
	// db2.example.org:0
	// servers.yaml:4:5: servers[0].prot: unknown key; did you mean "port"?
	// servers.yaml:6:11: servers[1].port: got "fast", expected a whole number; write digits only, such as 42
	// servers.yaml:7:5: servers[1].host: the key is written twice (first at line 5); keep one
}

// Checks that belong to the caller's file are reported through Report, so
// they read like the walker's own.
func ExampleWalker_Report() {
	var w yamlstrict.Walker
	root := w.Document([]byte("queue: urgent\n"), "add a queue: setting")
	f := w.Mapping(root, "", []string{"queue"})["queue"]
	if q, ok := w.String(f.Value, f.Path); ok && q != "low" && q != "high" {
		w.Report(f.Value, f.Path, fmt.Sprintf("%q is not a known queue", q), "use low or high")
	}
	fmt.Println(w.Err("app.yaml"))
	// Output:
	// app.yaml:1:8: queue: "urgent" is not a known queue; use low or high
}
