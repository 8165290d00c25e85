package diffcard_test

import (
	"fmt"

	"github.com/gordis-run/gordis/plugins/toolfs/diffcard"
)

func ExampleRender() {
	fmt.Print(diffcard.Render(diffcard.Change{
		Name:   "notes.md",
		Before: "# Notes\nstatus: draft\n",
		After:  "# Notes\nstatus: reviewed\n",
	}))
	fmt.Print(diffcard.Render(diffcard.Change{Name: "huge.log", Omitted: true}))
	// Output:
	// --- notes.md
	// +++ notes.md
	// @@ -1,2 +1,2 @@
	//  # Notes
	// -status: draft
	// +status: reviewed
	// --- huge.log
	// +++ huge.log
	// (too large to show a diff)
}
