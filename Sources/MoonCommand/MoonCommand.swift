// The MoonCommand stage. See DESIGN.md §1.
