// The MoonRun stage. See DESIGN.md §1.
