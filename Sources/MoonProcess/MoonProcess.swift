// The MoonProcess stage. See DESIGN.md §1.
