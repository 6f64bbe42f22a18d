use toolnexus::tool;

struct Db;

impl Db {
    #[tool]
    fn search(&self, query: String) -> String {
        query
    }
}

fn main() {}
