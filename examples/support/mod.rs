//! Set-up shared by the examples that talk to a model. A folder module, so Cargo does not
//! take it for an example of its own.

use toolnexus::client::{Client, Style};
use toolnexus_mock::{MockModel, Scenario};

/// The embedded scripted model on 127.0.0.1 and a client of it speaking `style`. Keep the
/// model alive while the client is used: dropping it stops the server.
pub async fn mock_client(style: Style) -> Result<(MockModel, Client), Box<dyn std::error::Error>> {
    let model = MockModel::start("127.0.0.1:0", Scenario::Planner).await?;
    let client = Client::builder()
        .base_url(model.base_url())
        .style(style)
        .model("mock-model")
        .api_key("not-needed-for-the-mock")
        .build()?;
    Ok((model, client))
}
