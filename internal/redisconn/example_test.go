package redisconn_test

import (
	"fmt"

	"github.com/herald-dev/herald/internal/redisconn"
)

func ExampleConfig_Redacted() {
	r := redisconn.Config{URL: "redis-sentinel://:hunter2@10.0.0.1:26379,10.0.0.2:26379/0?master=mymaster"}
	fmt.Println(r.Redacted())
	// Output: redis-sentinel://:xxxxx@10.0.0.1:26379,10.0.0.2:26379/0?master=mymaster
}
