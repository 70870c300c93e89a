// The MoonGraph stage. See DESIGN.md §1.
