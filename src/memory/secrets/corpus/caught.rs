//! Secrets that must be refused, with the kind a refusal names.

use super::{B32, an, b64, base64, digits, hx, k, rand, u64s, uuid};

const ANTHROPIC: &str = "an Anthropic API key";
const OPENAI: &str = "an OpenAI API key";
const AWS_ID: &str = "an AWS access key id";
const AWS_SECRET: &str = "an AWS secret access key";
const GITHUB: &str = "a GitHub token";
const GITLAB: &str = "a GitLab token";
const SLACK: &str = "a Slack token";
const SLACK_HOOK: &str = "a Slack webhook URL";
const STRIPE: &str = "a Stripe key";
const JWT: &str = "a JSON Web Token";
const HIGH: &str = "a high-entropy token (a generated secret)";
const KEY_BLOCK: &str = "a private key block";
const URL: &str = "a password in a URL";
const CONN: &str = "a password in a connection string";
const PASSWORD: &str = "a password";
const ASSIGNED: &str = "a secret assignment";
const BEARER: &str = "a bearer token";

fn c(kind: &'static str, parts: &[&str]) -> (String, &'static str) {
    (k(parts), kind)
}

fn b32(seed: u64, n: usize) -> String {
    rand(seed, n, B32)
}

/// A PEM body: lines of 64 base64 characters.
fn pem(seed: u64, lines: usize, newline: &str) -> String {
    (0..lines).map(|i| b64(seed + i as u64, 64)).collect::<Vec<_>>().join(newline)
}

// One sample a line: a table that rustfmt would spread over a thousand.
#[rustfmt::skip]
pub(super) fn secrets() -> Vec<(String, &'static str)> {
    let pw = |seed| k(&[&an(seed, 6), "!", &an(seed + 1, 4)]);
    let jwt = |seed| {
        k(&[
            "eyJ", &u64s(seed, 33),
            ".", "eyJ", &u64s(seed + 1, 60),
            ".", &u64s(seed + 2, 43),
        ])
    };
    vec![
        // Anthropic
        c(ANTHROPIC, &["ANTHROPIC_API_KEY=", "sk-ant-", "api03-", &u64s(1, 93), "AA"]),
        c(ANTHROPIC, &["- The staging key is ", "sk-ant-", "api03-", &u64s(2, 93), "AA"]),
        c(ANTHROPIC, &["export ANTHROPIC_ADMIN_KEY=\"", "sk-ant-", "admin01-", &u64s(3, 93), "AA\""]),
        c(ANTHROPIC, &["{\"apiKey\": \"", "sk-ant-", "oat01-", &u64s(4, 80), "\"}"]),
        c(ANTHROPIC, &["claude --api-key ", "sk-ant-", "api03-", &u64s(5, 93), "AA -p hi"]),
        c(ANTHROPIC, &["  anthropic_api_key: ", "sk-ant-", "api03-", &u64s(6, 40)]),
        // OpenAI
        c(OPENAI, &["OPENAI_API_KEY=", "sk-proj-", &u64s(10, 74), "T3Blbk", "FJ", &u64s(11, 74)]),
        c(OPENAI, &["export OPENAI_API_KEY='", "sk-svcacct-", &u64s(12, 58), "T3Blbk", "FJ", &u64s(13, 58), "'"]),
        c(OPENAI, &["- admin key for usage reports: ", "sk-admin-", &u64s(14, 58), "T3Blbk", "FJ", &u64s(15, 58)]),
        c(OPENAI, &["openai.api_key = \"", "sk-", &an(16, 20), "T3Blbk", "FJ", &an(17, 20), "\""]),
        c(OPENAI, &["curl https://api.openai.com/v1/models -H \"Authorization: Bearer ", "sk-proj-",
            &u64s(18, 74), "\""]),
        c(OPENAI, &["OPENAI_KEY: ", "sk-", &an(19, 48)]),
        c(OPENAI, &["| prod | ", "sk-", &an(20, 48), " | rotated |"]),
        // AWS
        c(AWS_ID, &["AWS_ACCESS_KEY_ID=", "AKIA", &b32(30, 16)]),
        c(AWS_SECRET, &["aws_secret_access_key = ", &b64(31, 40)]),
        c(AWS_ID, &["{\"AccessKeyId\": \"", "ASIA", &b32(32, 16), "\", \"Expiration\": \"2025-01-01\"}"]),
        c(AWS_SECRET, &["\"SecretAccessKey\": \"", &b64(33, 40), "\","]),
        c(AWS_SECRET, &["export AWS_SECRET_ACCESS_KEY=", &b64(34, 40)]),
        c(AWS_ID, &["- CI deploys with ", "AKIA", &b32(35, 16), " (user ci-deploy)"]),
        c(AWS_ID, &["[default]\naws_access_key_id = ", "AKIA", &b32(36, 16), "\naws_secret_access_key = ",
            &b64(37, 40)]),
        c(ASSIGNED, &["AWS_SESSION_TOKEN=", "FwoGZXIvYXdzE", &b64(38, 300)]),
        c(AWS_ID, &["role creds: ", "ABIA", &b32(39, 16)]),
        // GitHub
        c(GITHUB, &["git remote uses ", "ghp_", &an(40, 36)]),
        c(GITHUB, &["GITHUB_TOKEN=", "gho_", &an(41, 36)]),
        c(GITHUB, &["- app token ", "ghu_", &an(42, 36), " expires in 8h"]),
        c(GITHUB, &["git push https://x-access-token:", "ghs_", &an(43, 36), "@github.com/org/repo.git"]),
        c(GITHUB, &["refresh: ", "ghr_", &an(44, 76)]),
        c(GITHUB, &["GH_TOKEN=\"", "github_pat_", &an(45, 22), "_", &an(46, 59), "\""]),
        c(GITHUB, &["//npm.pkg.github.com/:_authToken=", "ghp_", &an(47, 36)]),
        c(GITHUB, &["Authorization: token ", "ghp_", &an(48, 36)]),
        // GitLab
        c(GITLAB, &["CI uses ", "glpat-", &u64s(50, 20)]),
        c(GITLAB, &["GITLAB_TOKEN=", "glpat-", &u64s(51, 27), ".01.", &hx(52, 9)]),
        c(GITLAB, &["deploy token ", "gldt-", &u64s(53, 20)]),
        c(GITLAB, &["gitlab-runner register --token ", "glrt-", &u64s(54, 20)]),
        // Slack
        c(SLACK, &["SLACK_BOT_TOKEN=", "xoxb-", &digits(60, 12), "-", &digits(61, 13), "-", &an(62, 24)]),
        c(SLACK, &["- user token ", "xoxp-", &digits(63, 12), "-", &digits(64, 12), "-", &digits(65, 13), "-",
            &hx(66, 32)]),
        c(SLACK, &["SLACK_APP_TOKEN: ", "xapp-", "1-A", &b32(67, 10), "-", &digits(68, 13), "-", &hx(69, 64)]),
        c(SLACK, &["legacy ", "xoxa-", "2-", &digits(70, 11), "-", &digits(71, 12), "-", &an(72, 32)]),
        c(SLACK, &["xoxe.", "xoxp-", "1-", &an(73, 150)]),
        c(SLACK_HOOK, &["SLACK_WEBHOOK_URL=https://", "hooks.slack.com/services/T", &b32(74, 8), "/B",
            &b32(75, 10), "/", &an(76, 24)]),
        c(SLACK_HOOK, &["curl -X POST -d '{\"text\":\"deployed\"}' https://", "hooks.slack.com/services/T",
            &b32(77, 10), "/B", &b32(78, 11), "/", &an(79, 24)]),
        c(SLACK_HOOK, &["- alerts go to https://", "hooks.slack.com/workflows/T", &b32(80, 10), "/A",
            &b32(81, 10), "/", &digits(82, 18), "/", &an(83, 24)]),
        // Stripe
        c(STRIPE, &["STRIPE_SECRET_KEY=", "sk_live_", "51", &an(90, 97)]),
        c(STRIPE, &["- restricted key ", "rk_live_", "51", &an(91, 60)]),
        c(STRIPE, &["Stripe.api_key = \"", "sk_test_", "4eC39", &an(92, 19), "\""]),
        c("a Stripe webhook secret", &["> Ready! Your webhook signing secret is ", "whsec_", &an(93, 32)]),
        c("a Stripe webhook secret", &["STRIPE_WEBHOOK_SECRET=", "whsec_", &an(94, 32)]),
        // Google
        c("a Google API key", &["GOOGLE_MAPS_API_KEY=", "AIza", "Sy", &u64s(100, 33)]),
        c("a Google API key", &["https://maps.googleapis.com/maps/api/geocode/json?address=x&key=", "AIza",
            "Sy", &u64s(101, 33)]),
        c("a Google OAuth client secret", &["\"client_secret\": \"", "GOCSPX-", &u64s(102, 28), "\""]),
        c("a Google OAuth token", &["access token ", "ya29", ".", &u64s(103, 120)]),
        c("a Google Cloud service account key",
            &["{\"type\": \"service_account\", \"private_key\": \"-----BEGIN ", "PRIVATE KEY-----\\n",
            "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", &pem(104, 3, "\\n"), "\\n-----END PRIVATE KEY-----\\n\"}"]),
        // npm, PyPI
        c("an npm token", &["//registry.npmjs.org/:_authToken=", "npm_", &an(110, 36)]),
        c("an npm token", &["NPM_TOKEN=", "npm_", &an(111, 36)]),
        c("an npm token", &["- publish with ", "npm_", &an(112, 36), " (automation)"]),
        c("a PyPI token", &["[pypi]\nusername = __token__\npassword = ", "pypi-", "AgEIcHlwaS5vcmc",
            &u64s(113, 140)]),
        c("a PyPI token", &["TWINE_PASSWORD=", "pypi-", "AgEIcHlwaS5vcmc", &u64s(114, 80)]),
        c("a PyPI token", &["test upload: ", "pypi-", "AgENdGVzdC5weXBpLm9yZw", &u64s(115, 80)]),
        // SendGrid, Twilio, Mailgun
        c("a SendGrid API key", &["SENDGRID_API_KEY=", "SG.", &u64s(120, 22), ".", &u64s(121, 43)]),
        c("a SendGrid API key", &["sgMail.setApiKey('", "SG.", &u64s(122, 22), ".", &u64s(123, 43), "')"]),
        c("a SendGrid API key", &["- mail key is ", "SG.", &u64s(124, 22), ".", &u64s(125, 43)]),
        c("a Twilio API key", &["TWILIO_API_KEY=", "SK", &hx(126, 32)]),
        c(ASSIGNED, &["TWILIO_AUTH_TOKEN=", &hx(127, 32)]),
        c(ASSIGNED, &["twilio:\n  account_sid: AC", &hx(128, 32), "\n  auth_token: ", &hx(129, 32)]),
        c("a Mailgun API key", &["MAILGUN_API_KEY=", "key-", &hx(130, 32)]),
        c("a Mailgun API key", &["- mailgun: ", "key-", &hx(131, 32)]),
        c(ASSIGNED, &["MAILGUN_API_KEY=", &hx(132, 32), "-", &hx(133, 8), "-", &hx(134, 8)]),
        // Hugging Face
        c("a Hugging Face token", &["HF_TOKEN=", "hf_", &an(140, 34)]),
        c("a Hugging Face token", &["huggingface-cli login --token ", "hf_", &an(141, 34)]),
        c("a Hugging Face token", &["org token ", "api_org_", &an(142, 34)]),
        // Azure
        c("an Azure storage account key", &["DefaultEndpointsProtocol=https;AccountName=acct;", "AccountKey=",
            &b64(150, 86), "==;EndpointSuffix=core.windows.net"]),
        c(ASSIGNED, &["AZURE_STORAGE_KEY=", &b64(151, 86), "=="]),
        c("a shared access signature", &["https://acct.blob.core.windows.net/c/f.zip?sv=2022-11-02&ss=b&srt=o",
            "&sp=r&se=2025-01-01T00:00:00Z&", "sig=", &an(152, 43), "%3D"]),
        c("a shared access signature", &["SharedAccessSignature=sv=2021-06-08&ss=q&", "sig=", &an(153, 44), "%3D"]),
        c("an Azure shared access key", &["Endpoint=sb://ns.servicebus.windows.net/;",
            "SharedAccessKeyName=RootManageSharedAccessKey;", "SharedAccessKey=", &b64(154, 43), "="]),
        c("an Azure AD client secret", &["AZURE_CLIENT_SECRET=", &an(155, 3), "8Q~", &u64s(156, 34)]),
        // Discord, Telegram
        c("a Discord bot token", &["DISCORD_TOKEN=", &base64(&digits(160, 18)), ".", &u64s(161, 6), ".",
            &u64s(162, 38)]),
        c("a Discord bot token", &["client.login('", &base64(&digits(163, 19)).replace('=', ""), ".",
            &u64s(164, 6), ".", &u64s(165, 27), "')"]),
        c("a Discord webhook URL", &["https://", "discord.com/api/webhooks/", &digits(166, 18), "/", &u64s(167, 68)]),
        c("a Telegram bot token", &["TELEGRAM_BOT_TOKEN=", &digits(168, 10), ":AA", &u64s(169, 33)]),
        c("a Telegram bot token", &["curl https://api.telegram.org/bot", &digits(170, 9), ":AA", &u64s(171, 33),
            "/getMe"]),
        // DigitalOcean, Shopify, Atlassian, Databricks, Heroku, Doppler
        c("a DigitalOcean token", &["DIGITALOCEAN_ACCESS_TOKEN=", "dop_v1_", &hx(180, 64)]),
        c("a DigitalOcean token", &["- oauth ", "doo_v1_", &hx(181, 64)]),
        c("a Shopify token", &["SHOPIFY_ACCESS_TOKEN=", "shpat_", &hx(182, 32)]),
        c("a Shopify token", &["shared secret ", "shpss_", &hx(183, 32)]),
        c("an Atlassian API token", &["JIRA_API_TOKEN=", "ATATT3", &u64s(184, 186)]),
        c("an Atlassian API token", &["curl -u me@example.com:", "ATATT3", &u64s(185, 186),
            " https://x.atlassian.net"]),
        c("a Databricks token", &["DATABRICKS_TOKEN=", "dapi", &hx(186, 32)]),
        c("a Databricks token", &["- workspace token ", "dapi", &hx(187, 32), "-2"]),
        c("a Heroku API key", &["HEROKU_API_KEY=", "HRKU-AA", &u64s(188, 58)]),
        c(ASSIGNED, &["HEROKU_API_KEY=", &uuid(189)]),
        c("a Doppler token", &["DOPPLER_TOKEN=", "dp.st.", "prd.", &an(190, 43)]),
        c("a Doppler token", &["doppler configure set token ", "dp.pt.", &an(191, 43)]),
        // Linear, Postman, Sentry, Vault, Grafana, Supabase, AI providers
        c("a Linear API key", &["LINEAR_API_KEY=", "lin_api_", &an(200, 40)]),
        c("a Postman API key", &["POSTMAN_API_KEY=", "PMAK-", &hx(201, 24), "-", &hx(202, 34)]),
        c("a Sentry DSN", &["SENTRY_DSN=https://", &hx(203, 32), "@o", &digits(204, 6), ".ingest.sentry.io/",
            &digits(205, 7)]),
        // Providers no rule names, known by their shape alone, with no
        // keyword in the sentence (the tuning table of the vendor shape).
        c(HIGH, &["- CI pushes images with ", "acme_live_", &an(250, 32), "."]),
        c(HIGH, &["- The box boots with ", "ZXCV-", &rand(251, 28, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"), "."]),
        c(HIGH, &["- Nightly export uses ", "qrs_", &rand(252, 40, "abcdefghijklmnopqrstuvwxyz0123456789"), "."]),
        c(HIGH, &["- Deploys read ", "hx1.", &hx(253, 48), " from the vault."]),
        c(HIGH, &["- Staging uses ", "ABCD", &rand(254, 40, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"), "."]),
        c(HIGH, &["- Use ", "tok-us-", &rand(255, 36, "abcdefghijklmnopqrstuvwxyz0123456789"), " for the EU mirror."]),
        c(HIGH, &["- Gems are pushed with ", "rubyg_", &hx(256, 48), "."]),
        c(HIGH, &["- Batch runs use ", "sgx_", &hx(257, 16), "_", &hx(258, 40), " on the runner."]),
        c("a token in a URL", &["git clone https://", &rand(240, 52, "abcdefghijklmnopqrstuvwxyz0123456789"),
            "@dev.azure.com/org/project/_git/repo"]),
        c("a token in a URL", &["- the mirror pushes to https://", &hx(241, 40), "@github.com/org/mirror.git"]),
        c("a token in a URL", &["remote: https://", &an(242, 24), "@git.example.com/team/app"]),
        c("a password in a URL", &["git clone https://", &rand(243, 52, "abcdefghijklmnopqrstuvwxyz0123456789"),
            ":@dev.azure.com/org/project/_git/repo"]),
        c("a password in a URL", &["- the mirror pushes to https://", &hx(244, 40), ":x@github.com/org/mirror.git"]),
        c("a Sentry token", &["SENTRY_AUTH_TOKEN=", "sntrys_", "eyJpYXQiOjE3", &b64(206, 120), "_", &b64(207, 43)]),
        c("a Sentry token", &["- user token ", "sntryu_", &hx(208, 64)]),
        c("a HashiCorp Vault token", &["VAULT_TOKEN=", "hvs.", "CAESI", &u64s(209, 100)]),
        c("a Grafana token", &["GRAFANA_TOKEN=", "glsa_", &an(210, 32), "_", &hx(211, 8)]),
        c("a Supabase token", &["SUPABASE_ACCESS_TOKEN=", "sbp_", &hx(212, 40)]),
        c("a Groq API key", &["GROQ_API_KEY=", "gsk_", &an(213, 52)]),
        c("a Perplexity API key", &["- pplx: ", "pplx-", &an(214, 48)]),
        c("an xAI API key", &["XAI_API_KEY=", "xai-", &an(215, 80)]),
        c("a 1Password service account token", &["OP_SERVICE_ACCOUNT_TOKEN=", "ops_", "eyJ", &b64(216, 300)]),
        c("an age secret key", &["AGE-SECRET-KEY-1", &rand(217, 58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")]),
        // JWTs and Authorization headers
        c(JWT, &["Authorization: Bearer ", &jwt(220)]),
        c(JWT, &["{\"id_token\": \"", &jwt(223), "\"}"]),
        c(JWT, &["- session cookie: ", &jwt(226)]),
        c(JWT, &["curl -b 'jwt=", &jwt(229), "' https://app.example.com"]),
        c(BEARER, &["curl -H 'Authorization: Bearer ", &an(232, 40), "' https://api.example.com"]),
        c(BEARER, &["authorization: bearer ", &u64s(233, 64)]),
        c(BEARER, &["- call it with Bearer ", &an(234, 32)]),
        c("a password in an Authorization header", &["Authorization: Basic ", &base64(&k(&["deploy:", &pw(235)]))]),
        c("a password in an Authorization header", &["curl -H \"Authorization: Basic ",
            &base64(&k(&["ci@example.com:", &an(236, 16)])), "\" https://x"]),
        c("a password in an Authorization header", &["{\"Authorization\": \"Basic ",
            &base64(&k(&[":", &an(237, 24)])), "\"}"]),
        c("a token in an Authorization header", &["Authorization: Token ", &hx(238, 40)]),
        c("a password in a curl command", &["curl -u admin:", &pw(239), " https://ci.example.com/api"]),
        c("a password in a curl command", &["curl -s --user \"ci:", &an(240, 20), "\" https://nexus.example.com"]),
        // Private keys
        c(KEY_BLOCK, &["-----BEGIN ", "RSA PRIVATE KEY-----\n", "MIIEpAIBAAKCAQEA", &pem(250, 4, "\n"),
            "\n-----END RSA PRIVATE KEY-----"]),
        c(KEY_BLOCK, &["-----BEGIN ", "OPENSSH PRIVATE KEY-----\n",
            "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ", &pem(255, 3, "\n")]),
        c(KEY_BLOCK, &["-----BEGIN ", "EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,",
            &hx(258, 32), "\n\n", &pem(259, 2, "\n")]),
        c(KEY_BLOCK, &["-----BEGIN ", "PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\nlQOYBF", &pem(261, 3, "\n")]),
        c(KEY_BLOCK, &["\"key\": \"-----BEGIN ", "PRIVATE KEY-----\\nMIIEvQIBADAN", &pem(264, 2, "\\n"),
            "\\n-----END PRIVATE KEY-----\""]),
        c(KEY_BLOCK, &["- the deploy key: -----BEGIN ", "ENCRYPTED PRIVATE KEY----- MIIFHDBOBgkqhkiG9w0BBQ0w",
            &b64(266, 80)]),
        c("a private key", &["key body: ", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", &b64(267, 120)]),
        // URL passwords
        c(URL, &["- DB is postgres://app:", &pw(270), "@db.internal:5432/app"]),
        c(URL, &["DATABASE_URL=postgres://u:", "pa/ss#", &an(271, 4), "@host/db"]),
        c(URL, &["MONGO_URL=mongodb+srv://app:", &an(272, 16), "@cluster0.ab1cd.mongodb.net/prod?retryWrites=true"]),
        c(URL, &["redis://:", &an(273, 12), "@cache:6379/0"]),
        c(URL, &["amqp://orders:", &an(274, 14), "@rabbit.internal:5672/"]),
        c(URL, &["git clone https://deploy:", "correcthorse", "@git.example.com/org/repo.git"]),
        c(URL, &["mysql://root:", &pw(275), "@127.0.0.1:3306/app"]),
        c(URL, &["smtp://apikey:", &an(276, 20), "@smtp.example.com:587"]),
        c(URL, &["- proxy: http://me:", "p%40ss%23", &an(277, 5), "@proxy.corp:8080"]),
        c(URL, &["see http://host:80/login?next=https://admin:", &an(278, 10), "@internal.example.com/"]),
        c(URL, &["postgresql://reporting:", &an(279, 8), "@[2001:db8::1]:5432/stats"]),
        // Connection strings
        c(CONN, &["Server=tcp:app.database.windows.net,1433;Database=app;User ID=app;", "Password=", &pw(280),
            ";Encrypt=true;"]),
        c(CONN, &["Driver={ODBC Driver 18 for SQL Server};Server=db;Uid=sa;", "Pwd=", &an(281, 12), ";"]),
        c(CONN, &["Host=db;Username=app;", "Password=", "correcthorse", ";Database=app"]),
        c(CONN, &["\"Default\": \"Data Source=db;Initial Catalog=app;User Id=sa;", "Password=", "Tr0ub4dor",
            "&3;\""]),
        c(PASSWORD, &["jdbc:postgresql://db:5432/app?user=app&", "password=", &an(282, 12)]),
        // Assignments: .env, YAML, JSON, code
        c(PASSWORD, &["DB_PASSWORD=", "correcthorse"]),
        c(PASSWORD, &["DB_PASSWORD=", "hunter22"]),
        c(PASSWORD, &["  MYSQL_ROOT_PASSWORD: ", "battery-staple-92"]),
        c(PASSWORD, &["    POSTGRES_PASSWORD: ", "correcthorse"]),
        c(PASSWORD, &["password: ", "hunter22"]),
        c(PASSWORD, &["{\"username\": \"app\", \"password\": \"", "correcthorse", "\"}"]),
        c(PASSWORD, &["spring.datasource.password=", "Winter2024"]),
        c(PASSWORD, &["--password=", "correcthorse"]),
        c(PASSWORD, &["mysql -u root --password=", "Tr0ub4dor", " app"]),
        c(PASSWORD, &["PGPASSWORD=", "correcthorse", " psql -h db -U app"]),
        c(PASSWORD, &["ADMIN_PASS=", "staple-horse-7"]),
        c(PASSWORD, &["SMTP_PASS: '", "mail-pass-2024", "'"]),
        c(PASSWORD, &["- The staging DB_PASSWORD=", "correcthorse", " for now"]),
        c(PASSWORD, &["ssh_passphrase: \"", "correct horse battery staple", "\""]),
        c(PASSWORD, &["GPG_PASSPHRASE=", "correct", " horse battery"]),
        c(PASSWORD, &["**Password**: `", "Sup3rS3cret", "`"]),
        c(PASSWORD, &["- Admin password: ", "Tr0ub4dor", "&3 (rotate monthly)"]),
        c(PASSWORD, &["TF_VAR_db_password=", &an(283, 16)]),
        c(PASSWORD, &["wifi_password: \"", "correct-horse-7", "\""]),
        c(PASSWORD, &["dbPassword := \"", "Pa55w0rd!", "\""]),
        c(PASSWORD, &["  export DATABASE_PASSWORD='", "c0rrect-h0rse", "'"]),
        c(PASSWORD, &["DOCKER_PASSWORD=", &an(284, 20)]),
        c(PASSWORD, &["db_pw: ", &an(285, 14)]),
        c(PASSWORD, &["[database]\npassword = ", "correcthorse", "\nhost = db"]),
        c(PASSWORD, &["Password: `", "hunter2", "`"]),
        c(PASSWORD, &["  data:\n    password: ", &base64("correct-horse-9")]),
        c("a password in a .netrc line", &["machine github.com login me password ", &an(286, 16)]),
        c("a password in a command line", &["docker login -u ci -p ", &an(287, 16), " registry.example.com"]),
        c("a password in a command line", &["mysql -h db -u root -p", &an(288, 12), " app < dump.sql"]),
        c("a password in a command line", &["sshpass -p '", &pw(289), "' ssh deploy@host"]),
        c("a password in a command line", &["redis-cli -h cache -a ", &an(292, 16), " ping"]),
        c("a registry credential", &["//registry.example.com/:_auth=", &base64(&k(&["ci:", &an(290, 16)]))]),
        c("a registry credential", &["{\"auths\": {\"ghcr.io\": {\"auth\": \"",
            &base64(&k(&["me:", &an(291, 20)])), "\"}}}"]),
        c(ASSIGNED, &["ENCRYPTION_KEY=", &hx(290, 64)]),
        c(ASSIGNED, &["RAILS_MASTER_KEY=", &hx(291, 32)]),
        c(ASSIGNED, &["SIGNING_KEY: ", &b64(292, 44)]),
        c(ASSIGNED, &["JWT_SECRET=", &an(293, 48)]),
        c(ASSIGNED, &["SESSION_SECRET=\"", &an(294, 32), "\""]),
        c(ASSIGNED, &["NEXTAUTH_SECRET=", &b64(295, 32)]),
        c(ASSIGNED, &["SECRET_KEY_BASE=", &hx(296, 128)]),
        c(ASSIGNED, &["SECRET_KEY = 'django-insecure-", &an(297, 20), "#k2m!(x", &an(298, 10), "'"]),
        c(ASSIGNED, &["APP_KEY=base64:", &b64(299, 43), "="]),
        c(ASSIGNED, &["client_secret: ", &an(300, 40)]),
        c(ASSIGNED, &["api_key = \"", &hx(301, 32), "\""]),
        c(ASSIGNED, &["x-api-key: ", &an(302, 40)]),
        c(ASSIGNED, &["X-API-KEY: ", &hx(303, 32)]),
        c(ASSIGNED, &["const client = new Client({ apiKey: '", &an(304, 32), "' });"]),
        c(ASSIGNED, &["token := \"", &an(305, 40), "\""]),
        c(ASSIGNED, &["'secret' => '", &an(306, 40), "',"]),
        c(ASSIGNED, &["OKTA_API_TOKEN=00", &u64s(307, 40)]),
        c(ASSIGNED, &["CLOUDFLARE_API_TOKEN=", &u64s(308, 40)]),
        c(ASSIGNED, &["DATADOG_API_KEY=", &hx(309, 32)]),
        c(ASSIGNED, &["ALGOLIA_ADMIN_KEY=", &hx(310, 32)]),
        c(ASSIGNED, &["https://api.example.com/v1/items?access_token=", &an(311, 32), "&page=2"]),
        c(ASSIGNED, &["refresh_token: \"", &u64s(312, 64), "\""]),
        c(ASSIGNED, &["webhook_secret: ", &an(313, 32)]),
        c(ASSIGNED, &["credentials: ", &b64(314, 40)]),
        c(ASSIGNED, &["PrivateKey = ", &b64(315, 43), "="]),
        c(ASSIGNED, &["PresharedKey = ", &b64(316, 43), "="]),
        c(ASSIGNED, &["MY_TOKEN=", "correcthorsebatterystaple"]),
        c(ASSIGNED, &["JWT_SECRET: ", &hx(317, 20)]),
        c(ASSIGNED, &["{\"client_secret\": \"", &an(318, 16), "\"}"]),
        c(ASSIGNED, &["'api_key' => '", &hx(319, 16), "'"]),
        c(ASSIGNED, &["The token: ", &an(320, 24)]),
        c(ASSIGNED, &["\\\"api_key\\\": \\\"", &an(321, 32), "\\\""]),
        c(ASSIGNED, &["LICENSE_KEY=", &an(322, 24)]),
        c(ASSIGNED, &["Ocp-Apim-Subscription-Key: ", &hx(323, 32)]),
        c(PASSWORD, &["auth: {username: ci, password: ", &pw(324), "}"]),
        c(PASSWORD, &["PASSWORD: ", "hunter22"]),
        c(PASSWORD, &["password: '", "correct horse battery staple", "'"]),
        c(PASSWORD, &["DB_PASS=", "Summer2024!"]),
        c(ASSIGNED, &["heroku config:set SECRET_KEY=", "abc123xyz987"]),
        c(PASSWORD, &["- test user password: ", &pw(325)]),
        c(PASSWORD, &["SMTP_PASSWORD=", "correcthorse", " # mail"]),
        c(PASSWORD, &["  DB_PASSWORD: ", "correcthorse", "  # local only"]),
        c(ASSIGNED, &["export SECRET=", &an(326, 17)]),
        c(PASSWORD, &["\"pwd\": \"", &an(327, 12), "\""]),
    ]
}
