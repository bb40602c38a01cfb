package storetest

import (
	"reflect"
	"testing"

	"github.com/ingot-dev/ingot/internal/store"
)

// testQuotaClasses: a class's limits merge per resource; classes are apart
// from projects' overrides.
func testQuotaClasses(t *testing.T, st store.Store) {
	if l, err := st.QuotaClass(ctx(t), store.DefaultQuotaClass); err != nil || len(l) != 0 {
		t.Fatalf("empty class: %v %v", l, err)
	}
	if err := st.SetQuotaClass(ctx(t), store.DefaultQuotaClass, store.Limits{store.ResInstances: 10, store.ResCores: -1}); err != nil {
		t.Fatal(err)
	}
	if err := st.SetQuotaClass(ctx(t), store.DefaultQuotaClass, store.Limits{store.ResInstances: 5}); err != nil {
		t.Fatal(err)
	}
	l, err := st.QuotaClass(ctx(t), store.DefaultQuotaClass)
	if err != nil || !reflect.DeepEqual(l, store.Limits{store.ResInstances: 5, store.ResCores: -1}) {
		t.Fatalf("class: %v %v", l, err)
	}
	if over, _ := st.QuotaOverrides(ctx(t), store.DefaultQuotaClass); len(over) != 0 {
		t.Fatalf("a class leaked into the projects' overrides: %v", over)
	}
	if l, _ := st.QuotaClass(ctx(t), "other"); len(l) != 0 {
		t.Fatalf("other class: %v", l)
	}
}
