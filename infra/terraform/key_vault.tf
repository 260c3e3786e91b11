# The Kubernetes bootstrap token, read by the Function App through a Key Vault reference.
# Terraform writes secrets through the data plane, so the identity running Terraform gets
# "Key Vault Secrets Officer" on this vault; the token is write-only and never enters the state.

resource "azurerm_key_vault" "app" {
  name                       = "${var.name_prefix}-kv-${substr(local.suffix, 0, 8)}"
  resource_group_name        = azurerm_resource_group.app.name
  location                   = azurerm_resource_group.app.location
  tenant_id                  = data.azurerm_client_config.current.tenant_id
  sku_name                   = "standard"
  rbac_authorization_enabled = true
  soft_delete_retention_days = 90
  purge_protection_enabled   = var.enable_purge_protection
  tags                       = local.tags
}

resource "azurerm_role_assignment" "deployer_secrets_officer" {
  scope              = azurerm_key_vault.app.id
  role_definition_id = "${local.role_definition_prefix}${local.built_in_roles["Key Vault Secrets Officer"]}"
  principal_id       = data.azurerm_client_config.current.object_id
}

resource "azurerm_key_vault_secret" "bootstrap_token" {
  name             = "bootstrap-token"
  key_vault_id     = azurerm_key_vault.app.id
  content_type     = "Kubernetes bootstrap token"
  value_wo         = var.bootstrap_token
  value_wo_version = var.bootstrap_token_version

  depends_on = [azurerm_role_assignment.deployer_secrets_officer]
}

locals {
  # Without a version, so a rotated token is picked up by the app.
  bootstrap_token_secret_uri = "${azurerm_key_vault.app.vault_uri}secrets/${azurerm_key_vault_secret.bootstrap_token.name}"
}
