use toolnexus::toolkit;

fn search(query: String) -> String {
    query
}

fn main() {
    let _ = toolkit![search];
}
