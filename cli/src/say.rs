//! `say!`: `println!` that ends the program quietly when stdout is closed (`cliper … | head`): the reader chose to
//! stop, which is no error to panic over. Exit code 141, as a shell reports a process ended by SIGPIPE.

macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if writeln!(std::io::stdout(), $($arg)*).is_err() {
            std::process::exit(141);
        }
    }};
}
