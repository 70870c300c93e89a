// The MoonReport stage. See DESIGN.md §1.
