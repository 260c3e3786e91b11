terraform {
  # 1.11 for write-only arguments: the bootstrap token goes to Key Vault without entering the state.
  required_version = ">= 1.11"

  required_providers {
    azurerm = {
      source = "hashicorp/azurerm"
      # 4.x: azurerm_function_app_flex_consumption, storage resources by storage_account_id,
      # Key Vault rbac_authorization_enabled and value_wo.
      version = ">= 4.45, < 5.0"
    }
  }
}

provider "azurerm" {
  features {}
  # Shared keys are disabled on the storage account; the provider must use Entra ID for storage too.
  storage_use_azuread = true
}
